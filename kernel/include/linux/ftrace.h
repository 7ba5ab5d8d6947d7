/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function tracer annotations.
 *
 * With CONFIG_FUNCTION_TRACER the kernel is built with -pg: the compiler
 * calls mcount (x86-64 `call mcount`, ARM `push {lr}; bl __gnu_mcount_nc`,
 * PowerPC `bl _mcount`) in every function's prologue. `notrace` functions
 * get no such call. NOTRACE_SYMBOL(fn) lists a notrace function in the
 * section __notrace_list (one address per entry) so the loader can show
 * which functions the tracer can never see.
 *
 * The build records every mcount call site in __mcount_loc (one address
 * per entry), as scripts/recordmcount does.
 */
#ifndef _LINUX_FTRACE_H
#define _LINUX_FTRACE_H

#include <linux/types.h>

#define notrace		__attribute__((__no_instrument_function__))

#define NOTRACE_SYMBOL(fname)						\
	static const unsigned long __used				\
	__section("__notrace_list") __notrace_list_##fname =		\
		(unsigned long)&fname

/*
 * The function every mcount stub calls: func(ip, parent_ip) as in the
 * mcount RFC. The stubs also pass the address of the traced function's
 * return-address slot, which only the function-graph tracer uses.
 */
typedef void (*ftrace_func_t)(unsigned long ip, unsigned long parent_ip,
			      unsigned long *slot);

extern ftrace_func_t ftrace_trace_function;
void ftrace_stub(unsigned long ip, unsigned long parent_ip, unsigned long *slot);

/* One saved return address (struct ftrace_ret_stack, 2.6.29). */
#define FTRACE_RETFUNC_DEPTH	50

struct ftrace_ret_stack {
	unsigned long ret;
	unsigned long func;
};

/* set_graph_function's capacity (2.6.30 kernel/trace/trace.h). */
#define FTRACE_GRAPH_MAX_FUNCS	32

#endif
