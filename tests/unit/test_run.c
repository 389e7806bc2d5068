/* test_run.c: what run/ decides without a worker: task ids from paths. */
#include <stdlib.h>

#include "../../src/run/task.h"
#include "unit.h"

void suite_run(void)
{
	static const char *const cases[][3] = {
		{ "KernelBench/level1/19_ReLU.py", "level1__19_ReLU", "level1" },
		{ "task.py", "tasks__task", "tasks" },
		{ "./x/a b+c.py", "x__a_b_c", "x" },
		{ "/abs/level2/4_Conv2d_Mish_Mish.py", "level2__4_Conv2d_Mish_Mish", "level2" },
		{ "./only.py", "tasks__only", "tasks" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *group = NULL, *id = task_id_of(cases[i][0], &group);
		CHECK_STR(id, cases[i][1], "task id of %s", cases[i][0]);
		CHECK_STR(group, cases[i][2], "its group");
		free(id);
		free(group);
	}
}
