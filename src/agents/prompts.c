/* prompts.c: egg's prompt templates (our own words) and their rendering. */
#include "prompts.h"

#include <string.h>

#include "../util/template.h"

/*
 * Every prompt of a task opens with the same system text: who egg's agents
 * are, the task, the device, the reference and the rules. Nothing in it
 * changes within a task, so a provider's prompt cache serves it on every
 * call after the first (Anthropic's cache_control marks where it ends;
 * OpenAI caches a repeated prefix by itself). What changes from call to
 * call (the role, the stage, the plan, the current kernel) comes after it,
 * in the user message, the role first.
 */

/* What every kernel egg accepts must respect: every agent sees these, so
 * that no plan asks for what the code agent must refuse. */
#define CONTRACT \
	"Rules every kernel must follow (egg enforces them at run time):\n" \
	"- All real computation runs in the kernel's own `@triton.jit` kernels. In PyTorch it may only allocate " \
	"outputs and workspaces (torch.empty and similar), take views, reshape and make tensors contiguous. No " \
	"torch math, no torch.nn.functional, no cuBLAS/cuDNN calls, no try/except fallback to PyTorch.\n" \
	"- Precision: {precision}\n" \
	"- Outputs: exactly the reference's output structure, shapes and dtypes, 0-dim tensors included (a " \
	"scalar loss is a 0-dim tensor, not shape [1]); never an input's memory unless the reference returns it.\n" \
	"- The inputs and weights come from the task: no test code, no get_inputs or get_init_inputs, and the " \
	"task's size constants are not redefined.\n"

#define FILE_RULES \
	"Rules for a kernel file (the code agent writes one; every plan must leave them possible):\n" \
	"- Define `class ModelNew(nn.Module)` with the same constructor arguments and forward signature as `Model`.\n" \
	"- Keep the names and shapes of Model's parameters and buffers (for example `self.linear = nn.Linear(...)`): " \
	"egg copies the reference's weights into parameters whose names and shapes match.\n" \
	"- Wrapper functions compute the grid and launch the kernels.\n" \
	"- Start the file with one comment line `# approach: ...` that names the algorithm in a few words.\n"

#define TASK_SYSTEM \
	"You are one of the agents of egg, which replaces a PyTorch reference with correct, fast Triton GPU " \
	"kernels. The code agent writes kernels; the profile agent reads a kernel's profile and plans one change; " \
	"the debug agent finds why a kernel failed. The message after this one says which agent you are, the " \
	"stage, and the form of your reply.\n\n" \
	"Task: {task_name}. Target: {device}\n\n" \
	"Reference (KernelBench form):\n```python\n{task}\n```\n\n" CONTRACT "\n" FILE_RULES

/* The code agent's reply. */
#define CODE_REPLY \
	"Follow the rules for a kernel file in the system message. Reply with exactly one complete Python file in " \
	"a single ```python fenced block.\n"

/* The profile and debug agents' plans. */
#define PLAN_RULES "Your plan must keep to the rules in the system message.\n"

/* The tuning stages' reply: a plan, or "no" when the stage has nothing to
 * change (the kernel is then kept and no new one is written). */
#define TUNE_REPLY \
	"Answer \"no\" in change when this stage's settings are already right for the kernel (it is then kept " \
	"as it is and no new kernel is written).\n" \
	"Reply with only this JSON object (bottleneck about 30 words, plan about 35):\n" \
	"{{\"change\": \"yes\" or \"no\", \"bottleneck\": \"...\", \"modification_plan\": \"...\"}}\n"

const struct prompt_template prompt_templates[P_COUNT] = {
	{ P_CODE_SEED, "code.seed", TASK_SYSTEM,
	  "Role: code agent, mode: seed.\n"
	  "Write seed {seed_index} of {seed_count}: a correct Triton implementation of the reference.\n"
	  "{diversity}\n\n" CODE_REPLY },

	{ P_CODE_REFINE, "code.refine", TASK_SYSTEM,
	  "Role: code agent, mode: algorithmic refinement.\n"
	  "Stage objective: {objective}\nConstraints: {rules}\n\n"
	  "The profile agent's analysis of the current kernel (JSON):\n{plan}\n\n"
	  "Apply exactly this change to the current kernel.\n\n"
	  "Current kernel ({timing}):\n```python\n{kernel}\n```\n\n" CODE_REPLY },

	{ P_CODE_TUNE, "code.tune", TASK_SYSTEM,
	  "Role: code agent, mode: hardware tuning ({stage_title}).\n"
	  "Stage objective: {objective}\nConstraints: {rules}\n\n"
	  "Decisions so far: {decisions}\n\n"
	  "The profile agent's plan for this stage (JSON):\n{plan}\n\n"
	  "Apply the plan to the current kernel and change nothing outside this stage's scope.\n\n"
	  "Current kernel ({timing}):\n```python\n{kernel}\n```\n\n" CODE_REPLY },

	{ P_CODE_REPAIR, "code.repair", TASK_SYSTEM,
	  "Role: code agent, mode: repair.\n"
	  "The kernel below failed egg's evaluation at the {fail_stage} stage. The debug agent's diagnosis (JSON):\n"
	  "{plan}\n\nFix exactly this problem; keep everything else.\n\n"
	  "Broken kernel:\n```python\n{kernel}\n```\n\n" CODE_REPLY },

	{ P_CODE_COMBINE, "code.combine", TASK_SYSTEM,
	  "Role: code agent, mode: hardware tuning (combining changes).\n"
	  "Stage objective: {objective}\nConstraints: {rules}\n\n"
	  "Decisions so far: {decisions}\n\n"
	  "The tuning stages each changed the same kernel side by side, and each change below was measured faster "
	  "than that kernel on its own. The current kernel is the fastest of them ({timing}). Bring the other "
	  "changes into it:\n\n{changes}\n"
	  "Keep what the current kernel does and add those changes; change nothing else.\n\n"
	  "Current kernel:\n```python\n{kernel}\n```\n\n" CODE_REPLY },

	{ P_PROFILE_REFINE, "profile.refine", TASK_SYSTEM,
	  "Role: profile agent, mode: algorithmic refinement. As a GPU performance expert, you read a kernel and "
	  "its profile and decide whether a high-level change of algorithm is worth making.\n"
	  "Stage objective: {objective}\nConstraints: {rules}\n"
	  "Read these metrics first: {focus}\n\n"
	  "Measured: {timing}\nProfile of the current kernel:\n{metrics}\n\n"
	  "Current kernel:\n```python\n{kernel}\n```\n\n" PLAN_RULES "\n"
	  "Name the single main bottleneck and one high-level change. Answer \"no\" in worth_optimizing when the "
	  "expected gain is under about 10%.\n"
	  "Reply with only this JSON object (bottleneck about 30 words, plan about 35):\n"
	  "{{\"worth_optimizing\": \"yes\" or \"no\", \"bottleneck\": \"...\", \"modification_plan\": \"...\"}}\n" },

	{ P_PROFILE_MAPPING, "profile.mapping", TASK_SYSTEM,
	  "Role: profile agent, mode: parallel mapping. You are a GPU performance expert.\n"
	  "Stage objective: {objective}\nConstraints: {rules}\n"
	  "Read these metrics first: {focus}\n\nDecisions so far: {decisions}\n\n"
	  "Measured: {timing}\nProfile of the current kernel:\n{metrics}\n\n"
	  "Current kernel:\n```python\n{kernel}\n```\n\n" PLAN_RULES "\n"
	  "Name the main obstacle to keeping every SM busy and one change of the grid mapping (or say the grid "
	  "should stay).\n" TUNE_REPLY },

	{ P_PROFILE_TILING, "profile.tiling", TASK_SYSTEM,
	  "Role: profile agent, mode: tensor tiling. You are a GPU performance expert.\n"
	  "Stage objective: {objective}\nConstraints: {rules}\n"
	  "Read these metrics first: {focus}\n\nDecisions so far: {decisions}\n\n"
	  "Measured: {timing}\nProfile of the current kernel:\n{metrics}\n\n"
	  "Current kernel:\n```python\n{kernel}\n```\n\n" PLAN_RULES "\n"
	  "Name the tiling bottleneck and propose 2 or 3 BLOCK configurations to measure.\n"
	  TUNE_REPLY },

	{ P_PROFILE_MEMORY, "profile.memory", TASK_SYSTEM,
	  "Role: profile agent, mode: memory optimization. You are a GPU performance expert.\n"
	  "Stage objective: {objective}\nConstraints: {rules}\n"
	  "Read these metrics first: {focus}\n\nDecisions so far: {decisions}\n\n"
	  "Measured: {timing}\nProfile of the current kernel:\n{metrics}\n\n"
	  "Current kernel:\n```python\n{kernel}\n```\n\n" PLAN_RULES "\n"
	  "Name the memory bottleneck and propose 3 or 4 (num_warps, num_stages) configurations, the current one "
	  "included.\n" TUNE_REPLY },

	{ P_DEBUG, "debug", TASK_SYSTEM,
	  "Role: debug agent. You find why a Triton kernel failed and say precisely what must change.\n"
	  "The kernel failed egg's evaluation at the {fail_stage} stage: {fail_reason}\n\n"
	  "Error log:\n```\n{error_log}\n```\n\n"
	  "Broken kernel:\n```python\n{kernel}\n```\n\n" PLAN_RULES "\n"
	  "Name the root cause specifically (what and where: line, variable, index expression) and what must "
	  "change.\nReply with only this JSON object:\n"
	  "{{\"critical_issue\": \"...\", \"modification_plan\": \"...\"}}\n" },

	{ P_SINGLE_OPTIMIZE, "single.optimize", TASK_SYSTEM,
	  "Role: single agent, mode: {stage_title}. You are egg's only agent this run: you read profiles and "
	  "write the kernels yourself.\n"
	  "Stage objective: {objective}\nConstraints: {rules}\n\nDecisions so far: {decisions}\n\n"
	  "Measured: {timing}\nProfile of the current kernel:\n{metrics}\n\n"
	  "Current kernel:\n```python\n{kernel}\n```\n\n"
	  "Choose one change for this stage yourself and write the improved kernel.\n\n" CODE_REPLY },

	{ P_SINGLE_REPAIR, "single.repair", TASK_SYSTEM,
	  "Role: single agent, mode: repair. You are egg's only agent this run: you read error logs and fix "
	  "kernels yourself.\n"
	  "The kernel failed egg's evaluation at the {fail_stage} stage: {fail_reason}\n\n"
	  "Error log:\n```\n{error_log}\n```\n\n"
	  "Broken kernel:\n```python\n{kernel}\n```\n\n"
	  "Find the cause and write the fixed kernel.\n\n" CODE_REPLY },
};

void prompt_set(struct prompt_vars *v, const char *name, const char *value)
{
	for (int i = 0; i < v->n; i++)
		if (!strcmp(v->names[i], name)) {
			v->values[i] = value;
			return;
		}
	if (v->n < (int)(sizeof(v->names) / sizeof(v->names[0]))) {
		v->names[v->n] = name;
		v->values[v->n++] = value;
	}
}

static const char *lookup(const char *name, void *ctx)
{
	const struct prompt_vars *v = ctx;
	for (int i = 0; i < v->n; i++)
		if (!strcmp(v->names[i], name))
			return v->values[i] ? v->values[i] : "";
	return NULL;
}

int prompt_render(enum prompt_id id, const struct prompt_vars *v, struct buf *system, struct buf *user)
{
	const struct prompt_template *t = &prompt_templates[id];
	if (template_expand(t->system, lookup, (void *)v, system) < 0 ||
	    template_expand(t->user, lookup, (void *)v, user) < 0)
		return -1;
	return 0;
}
