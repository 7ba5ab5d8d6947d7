// SPDX-License-Identifier: GPL-2.0
/*
 * The function tracer's guest half: the one registered function that the
 * mcount stubs call, the per-CPU "disabled" recursion counter, the tracers
 * that hand each traced call to the host, and the function-graph return
 * path.
 *
 * Following the "mcount tracing utility" RFC (LKML, 2008-01-03) and
 * kernel/trace/ftrace.c of 2.6.27/2.6.28:
 *
 * - ftrace_trace_function is what every mcount stub calls, as
 *   func(ip, parent_ip); ftrace_stub means "nobody": the stub compares
 *   against it and returns at once. Registering a function replaces
 *   whatever was there. The host is the "debugfs" writer: it stores
 *   ftrace_trace_function (register/unregister, and the ftrace_enabled
 *   sysctl, which swaps ftrace_stub in while off).
 * - function_trace_call() is the seed's tracer: a per-CPU "disabled"
 *   counter is incremented first and only the outermost entry records, so
 *   a tracer that calls a traced function cannot recurse. Records go into
 *   this CPU's ring buffer (RB_EV_FUNCTION: ip, parent_ip), as 2.6.28's
 *   trace_function() writes a struct ftrace_entry into the trace buffer;
 *   the host drains it like every other trace event (tracing/ring.py).
 * - ftrace_selftest_recursive_call() is a tracer that calls a traced
 *   function on purpose, to prove that counter works.
 * - The function-graph tracer (2.6.29's kernel/trace/trace_functions_graph.c)
 *   gets the address of the traced function's return-address slot as a
 *   third argument, saves the return address in the task's ret_stack (in
 *   its thread_info, so that creating a task pays for no more than the
 *   depth counter: 2.6.29 allocates it only when the tracer starts) and
 *   points the slot at return_to_handler (per-arch asm), which calls
 *   ftrace_return_to_handler() here.
 *
 * Every function in this file is notrace except the one that the
 * recursion self-test calls on purpose.
 */
#include <linux/kernel.h>
#include <linux/ftrace.h>
#include <linux/sched.h>
#include <linux/ring_buffer.h>

notrace void ftrace_stub(unsigned long ip, unsigned long parent_ip, unsigned long *slot)
{
	(void)ip; (void)parent_ip; (void)slot;
}
NOTRACE_SYMBOL(ftrace_stub);

/* What the mcount stubs call; ftrace_stub when nothing is registered. */
ftrace_func_t ftrace_trace_function = ftrace_stub;

#ifdef CONFIG_FUNCTION_TRACER

/* Per-CPU recursion safety net (the seed's data->disabled). */
int ftrace_cpu_disabled[CONFIG_NR_CPUS];
/* Entries refused by the net, per CPU: nonzero only when a tracer recursed. */
unsigned long ftrace_recursion_caught[CONFIG_NR_CPUS];

static __always_inline int ftrace_enter(int cpu)
{
	int disabled = ++ftrace_cpu_disabled[cpu];

	barrier();
	if (likely(disabled == 1))
		return 1;
	ftrace_recursion_caught[cpu]++;
	return 0;
}

static __always_inline void ftrace_exit(int cpu)
{
	barrier();
	ftrace_cpu_disabled[cpu]--;
}

/* Two words into this CPU's ring buffer; nothing while no consumer set it up. */
static __always_inline void ftrace_record(unsigned int id, unsigned long a, unsigned long b)
{
	unsigned long *p;

	if (!ring_buffer_channel.subbuf_size)
		return;
	p = ring_buffer_reserve(id, 2 * sizeof(unsigned long));
	if (!p)
		return;
	p[0] = a;
	p[1] = b;
	ring_buffer_commit();
}

/* The function tracer: one RB_EV_FUNCTION record per traced call. */
notrace void function_trace_call(unsigned long ip, unsigned long parent_ip,
				 unsigned long *slot)
{
	int cpu = smp_processor_id();

	(void)slot;
	if (ftrace_enter(cpu))
		ftrace_record(RB_EV_FUNCTION, ip, parent_ip);
	ftrace_exit(cpu);
}
NOTRACE_SYMBOL(function_trace_call);

/* A traced function (no notrace): its own mcount call re-enters the tracer. */
noinline unsigned long ftrace_selftest_traced(unsigned long x)
{
	return x * 2654435761UL + 1;
}

unsigned long ftrace_selftest_sink;

/* A tracer that calls a traced function while it records. */
notrace void ftrace_selftest_recursive_call(unsigned long ip, unsigned long parent_ip,
					    unsigned long *slot)
{
	int cpu = smp_processor_id();

	(void)slot;
	if (ftrace_enter(cpu)) {
		ftrace_selftest_sink += ftrace_selftest_traced(ip);
		ftrace_record(RB_EV_FUNCTION, ip, parent_ip);
	}
	ftrace_exit(cpu);
}
NOTRACE_SYMBOL(ftrace_selftest_recursive_call);

#ifdef CONFIG_FUNCTION_GRAPH_TRACER
extern char return_to_handler[];

/* Entries dropped because a task's ret_stack was full. */
unsigned long ftrace_graph_overrun;

/*
 * set_graph_function, written by the host: the mcount ips of the chosen
 * functions. While any is set, a task's outermost call is traced only if it
 * is one of them, and then everything it calls (2.6.30 trace_graph_entry():
 * "trace it when it is-nested-in or is a function enabled").
 */
unsigned long ftrace_graph_funcs[FTRACE_GRAPH_MAX_FUNCS];
int ftrace_graph_count;

static __always_inline int ftrace_graph_addr(unsigned long ip)
{
	int i;

	if (!ftrace_graph_count)
		return 1;
	for (i = 0; i < ftrace_graph_count; i++)
		if (ftrace_graph_funcs[i] == ip)
			return 1;
	return 0;
}

/* prepare_ftrace_return() and the entry half of trace_graph_entry(). */
notrace void ftrace_graph_caller_entry(unsigned long ip, unsigned long parent_ip,
				       unsigned long *slot)
{
	struct task_struct *t = current;
	int cpu = smp_processor_id();
	int depth;

	if (!t || *slot != parent_ip)
		return;
	if (ftrace_enter(cpu)) {
		depth = t->curr_ret_stack + 1;
		if (depth >= FTRACE_RETFUNC_DEPTH) {
			ftrace_graph_overrun++;
		} else if (depth > 1 || ftrace_graph_addr(ip)) {
			current_thread_info()->ret_stack[depth].ret = parent_ip;
			current_thread_info()->ret_stack[depth].func = ip;
			t->curr_ret_stack = depth;
			*slot = (unsigned long)return_to_handler;
			ftrace_record(RB_EV_FUNCGRAPH_ENTRY, ip, depth);
		}
	}
	ftrace_exit(cpu);
}
NOTRACE_SYMBOL(ftrace_graph_caller_entry);

/* Called by return_to_handler: report the return, give back the real address. */
notrace unsigned long ftrace_return_to_handler(void)
{
	struct task_struct *t = current;
	int depth = t->curr_ret_stack;
	unsigned long ret = current_thread_info()->ret_stack[depth].ret;

	ftrace_record(RB_EV_FUNCGRAPH_EXIT, current_thread_info()->ret_stack[depth].func, depth);
	t->curr_ret_stack = depth - 1;
	return ret;
}
NOTRACE_SYMBOL(ftrace_return_to_handler);
#endif /* CONFIG_FUNCTION_GRAPH_TRACER */

#endif /* CONFIG_FUNCTION_TRACER */
