/* test_ncu.c: the ncu CSV reader and aggregation, on a real H200 capture. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/profile/ncu.h"
#include "../../src/util/buf.h"
#include "../../src/util/fs.h"
#include "unit.h"

void suite_ncu(void)
{
	struct buf text = BUF_INIT;
	struct ncu_report r;
	struct strvec f = STRVEC_INIT;
	size_t pos = 0;
	char why[256], *path = fs_join(unit_source_dir, "tests/fuzz/corpus/ncu/h200_torch_kernels.csv");
	const char *quoted = "\"a,b\",\"say \"\"hi\"\"\",plain\nnext";
	size_t dur = ncu_metric_index("duration_ns"), dram = ncu_metric_index("dram_throughput_pct");
	size_t grid = ncu_metric_index("grid_size");

	CHECK(ncu_csv_record(quoted, strlen(quoted), &pos, &f) == 3 && !strcmp(f.v[0], "a,b") &&
	      !strcmp(f.v[1], "say \"hi\"") && !strcmp(f.v[2], "plain") && pos == (size_t)(strchr(quoted, '\n') - quoted) + 1,
	      "CSV records keep quoted commas and doubled quotes");
	strvec_clear(&f);

	CHECK(fs_read(path, &text) == 0, "the H200 ncu capture is readable");
	CHECK(ncu_parse(text.data, text.len, &r, why, sizeof(why)) == 0, "the capture parses");
	CHECK(r.nkernels == 5, "all five kernels are read, ncu's own lines and the units row skipped (%zu)", r.nkernels);
	CHECK(r.kernels[0].has[dur] && r.kernels[0].value[dur] == 41920,
	      "thousands separators are read (41,920 ns)");
	{
		double total = 0, acc = 0;
		for (size_t i = 0; i < r.nkernels; i++) {
			total += r.kernels[i].value[dur];
			acc += r.kernels[i].value[dram] * r.kernels[i].value[dur];
		}
		CHECK(fabs(r.agg[dur] - total) < 1e-6, "durations are summed over kernels");
		CHECK(fabs(r.agg[dram] - acc / total) < 1e-9, "percentages are duration-weighted means");
		CHECK(r.agg[grid] == 1056, "the grid size is that of the longest kernel");
	}
	ncu_report_clear(&r);

	CHECK(ncu_parse("==PROF== Disconnected\n", 22, &r, why, sizeof(why)) == -1 && strstr(why, "Kernel Name"),
	      "output without a report is an error that says so");
	CHECK(ncu_parse("\"ID\",\"Kernel Name\"\n\"\",\"\"\n", 26, &r, why, sizeof(why)) == 0 && r.nkernels == 0,
	      "a report with no kernels parses to zero kernels");
	ncu_report_clear(&r);
	buf_release(&text);
	free(path);
}
