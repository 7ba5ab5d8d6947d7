// SPDX-License-Identifier: GPL-2.0
/*
 * A round-robin scheduler over one shared runqueue.
 *
 * The runqueue lock is taken in schedule() and released by whichever
 * context runs next (finish_task_switch), as in Linux: a task put back on
 * the queue cannot be picked by another CPU before its stack pointer is
 * saved. `on_cpu` stays set until the switch is complete, so a wakeup of
 * a task that is still running only marks it runnable.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/marker.h>
#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <trace/sched.h>
#include <kisim/hypercall.h>

DEFINE_TRACE(sched_switch);
DEFINE_TRACE(sched_wakeup);

struct rq {
	spinlock_t lock;
	struct task_struct *head, *tail;
	int nr_running;
	int nr_threads;			/* live tasks, idle tasks excluded */
};

static struct rq runqueue;
static struct task_struct idle_tasks[CONFIG_NR_CPUS];
static struct task_struct *prev_task[CONFIG_NR_CPUS];	/* per CPU: who we switched from */
static struct kmem_cache *task_cachep;

static union thread_union task_stacks[NR_TASK_STACKS] __aligned(THREAD_SIZE);
static u8 task_stack_used[NR_TASK_STACKS];
static DEFINE_SPINLOCK(stack_lock);

static u32 next_pid = 1;
int nr_cpus = 1;
int system_halting;

extern void __switch_to_asm(unsigned long *prev_sp, unsigned long next_sp);
extern void ret_from_fork(void);
NOKPROBE_SYMBOL(__switch_to_asm);
NOKPROBE_SYMBOL(ret_from_fork);

static union thread_union *alloc_thread_stack(void)
{
	union thread_union *stack = NULL;
	int i;

	spin_lock(&stack_lock);
	for (i = 0; i < NR_TASK_STACKS; i++) {
		if (!task_stack_used[i]) {
			task_stack_used[i] = 1;
			stack = &task_stacks[i];
			break;
		}
	}
	spin_unlock(&stack_lock);
	return stack;
}

static void free_thread_stack(union thread_union *stack)
{
	spin_lock(&stack_lock);
	task_stack_used[stack - task_stacks] = 0;
	spin_unlock(&stack_lock);
}

static void enqueue_task(struct task_struct *p)
{
	p->rq_next = NULL;
	if (runqueue.tail)
		runqueue.tail->rq_next = p;
	else
		runqueue.head = p;
	runqueue.tail = p;
	runqueue.nr_running++;
}

static struct task_struct *dequeue_task(void)
{
	struct task_struct *p = runqueue.head;

	if (p) {
		runqueue.head = p->rq_next;
		if (!runqueue.head)
			runqueue.tail = NULL;
		p->rq_next = NULL;
		runqueue.nr_running--;
	}
	return p;
}

int nr_running(void)
{
	return READ_ONCE(runqueue.nr_running);
}

void sched_init_idle(int cpu)
{
	struct task_struct *idle = &idle_tasks[cpu];

	idle->pid = 0;
	idle->prio = MAX_PRIO;		/* the idle task sits below every nice level */
	idle->flags = PF_IDLE;
	idle->state = TASK_RUNNING;
	idle->on_cpu = 1;
	idle->stack = &init_stacks[cpu];
	snprintf(idle->comm, sizeof(idle->comm), "swapper/%d", cpu);
	init_stacks[cpu].thread_info.task = idle;
	init_stacks[cpu].thread_info.cpu = cpu;
}

void sched_init(int ncpus)
{
	nr_cpus = ncpus;
	spin_lock_init(&runqueue.lock);
	task_cachep = kmem_cache_create("task_struct", sizeof(struct task_struct), 0, 0, NULL);
}

/* Called with the runqueue lock held. */
static void ttwu_locked(struct task_struct *p)
{
	if (p->state == TASK_RUNNING)
		return;
	p->state = TASK_RUNNING;
	trace_mark(sched_wakeup, "pid %d state %ld", p->pid, p->state);
	trace_sched_wakeup(p);
	if (!p->on_cpu)
		enqueue_task(p);
}

int wake_up_process(struct task_struct *p)
{
	spin_lock(&runqueue.lock);
	ttwu_locked(p);
	spin_unlock(&runqueue.lock);
	return 1;
}

/*
 * Runs in the context we switched to, with the runqueue lock still held
 * from schedule(): completes the switch away from `prev`.
 */
static void finish_task_switch(struct task_struct *prev)
{
	WRITE_ONCE(prev->on_cpu, 0);
	if (prev->state == TASK_DEAD) {
		kprobe_flush_task(prev);
		free_thread_stack(prev->stack);
		kmem_cache_free(task_cachep, prev);
	}
	spin_unlock(&runqueue.lock);
}

void schedule(void)
{
	struct task_struct *prev = current, *next;
	int cpu = smp_processor_id();

	spin_lock(&runqueue.lock);
	if (prev->state == TASK_RUNNING && !(prev->flags & PF_IDLE))
		enqueue_task(prev);
	next = dequeue_task();
	if (!next)
		next = &idle_tasks[cpu];
	if (next == prev) {
		spin_unlock(&runqueue.lock);
		return;
	}
	next->on_cpu = 1;
	next->stack->thread_info.cpu = cpu;
	next->nvcsw++;
	trace_mark(sched_switch, "prev_pid %d next_pid %d prev_state %ld",
		   prev->pid, next->pid, prev->state);
	trace_sched_switch(prev, next);
	prev_task[cpu] = prev;
	__switch_to_asm(&prev->sp, next->sp);
	/* Back in `prev`, possibly on another CPU. */
	finish_task_switch(prev_task[smp_processor_id()]);
}

/* The first code a new task runs (from ret_from_fork). */
asmlinkage __noreturn void schedule_tail_and_run(void)
{
	struct task_struct *self;

	finish_task_switch(prev_task[smp_processor_id()]);
	self = current;
	self->fn(self->arg);
	do_exit();
}

struct task_struct *kernel_thread(int (*fn)(void *), void *arg, const char *name)
{
	struct task_struct *p = kmem_cache_alloc(task_cachep, GFP_KERNEL);
	union thread_union *stack = alloc_thread_stack();

	if (!p || !stack)
		panic("kernel_thread(%s): out of %s", name, p ? "stacks" : "memory");
	memset(p, 0, sizeof(*p));
	p->fn = fn;
	p->arg = arg;
	p->stack = stack;
	p->state = TASK_RUNNING;
	p->prio = DEFAULT_PRIO;
	p->parent = current;
	strscpy(p->comm, name, sizeof(p->comm));
	stack->thread_info.task = p;
	stack->thread_info.cpu = 0;
	p->sp = arch_init_task_stack((unsigned long)(stack + 1), (unsigned long)ret_from_fork);

	spin_lock(&runqueue.lock);
	p->pid = next_pid++;
	runqueue.nr_threads++;
	current->nr_children++;
	trace_mark(sched_process_fork, "parent_pid %d child_pid %d",
		   current->pid, p->pid);
	enqueue_task(p);
	spin_unlock(&runqueue.lock);
	return p;
}

void wait_for_children(void)
{
	for (;;) {
		spin_lock(&runqueue.lock);
		if (!current->nr_children) {
			spin_unlock(&runqueue.lock);
			return;
		}
		current->state = TASK_INTERRUPTIBLE;
		spin_unlock(&runqueue.lock);
		schedule();
	}
}

__noreturn void do_exit(void)
{
	struct task_struct *self = current, *parent = self->parent;

	spin_lock(&runqueue.lock);
	trace_mark(sched_process_exit, "pid %d", self->pid);
	runqueue.nr_threads--;
	if (parent && --parent->nr_children == 0)
		ttwu_locked(parent);
	self->state = TASK_DEAD;
	spin_unlock(&runqueue.lock);
	schedule();
	panic("dead task %u ran again", self->pid);
}

/*
 * Each CPU's idle task: run whatever is runnable; when nothing is, tell
 * the host (HC_IDLE ends this CPU's turn); once init has finished and
 * nothing is left, this CPU is done.
 */
__noreturn void cpu_idle(void)
{
	for (;;) {
		if (READ_ONCE(runqueue.nr_running)) {
			schedule();
			continue;
		}
		if (smp_load_acquire(&system_halting) && !READ_ONCE(runqueue.nr_threads))
			break;
		hypercall0(HC_IDLE);
	}
	for (;;)
		hypercall1(HC_EXIT, 0);
}
