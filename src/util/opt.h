/* opt.h: declarative command-line option tables and their parser. */
#ifndef EGG_OPT_H
#define EGG_OPT_H

#include <stdio.h>

#include "strvec.h"

/*
 * An option table is an array of struct opt ending with OPT_END. Commands
 * pass a list of tables (their own plus shared ones such as the LLM
 * settings). `dest` points to: int (OPT_FLAG: set to 1; OPT_INT),
 * double (OPT_DOUBLE), const char * (OPT_STRING: borrowed from argv).
 * OPT_NEGATE sets an int to 0 (e.g. --no-cache).
 * Values come as `--name VALUE` or `--name=VALUE`; `--` ends options.
 */
enum opt_type { OPT_END = 0, OPT_FLAG, OPT_NEGATE, OPT_STRING, OPT_INT, OPT_DOUBLE };

struct opt {
	const char *name;	/* long name without the dashes */
	char short_name;	/* 0 for none */
	enum opt_type type;
	void *dest;
	const char *arg;	/* value's name in help, e.g. "N" */
	const char *help;
};

#define OPT_TABLE_END { NULL, 0, OPT_END, NULL, NULL, NULL }

/* Parses argv[0..argc) (argv[0] is the first argument, not the command).
 * Non-option words are pushed onto `positional`. Returns 0, or -1 with
 * ERR_INPUT ("unknown option '--x'", "option '--n' needs a value", ...). */
int opt_parse(const struct opt *const *tables, int argc, char **argv,
	      struct strvec *positional);
/* Prints the option list of all tables. */
void opt_print_help(FILE *f, const struct opt *const *tables);

#endif
