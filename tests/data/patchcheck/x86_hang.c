#include "guest.h"
#include "patching.h"

/* A routine that waits for a flag nobody sets: it never returns. */
static volatile int done;

void my_hang(const struct pc_site *sites, int nr)
{
	while (!done)
		cpu_relax();
}
