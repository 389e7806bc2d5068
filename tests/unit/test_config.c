/* test_config.c: settings precedence and config-file validation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/config/config.h"
#include "../../src/llm/llm.h"
#include "../../src/util/err.h"
#include "../../src/util/fs.h"
#include "unit.h"

static char *write_tmp(const char *text)
{
	char path[] = "/tmp/egg-unit-config-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
	return xstrdup(path);
}

static void clear_env(void)
{
	const char *names[] = { "EGG_PROVIDER", "EGG_BASE_URL", "OPENAI_BASE_URL", "EGG_MODEL",
				"EGG_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "EGG_CONFIG",
				"EGG_TEMPERATURE", "EGG_MAX_OUTPUT_TOKENS", NULL };
	for (int i = 0; names[i]; i++)
		unsetenv(names[i]);
	setenv("XDG_CONFIG_HOME", "/nonexistent-egg-unit", 1);
}

void suite_config(void)
{
	struct config cfg;
	char *path;

	clear_env();
	config_init(&cfg);
	CHECK(config_resolve(&cfg) == 0, "defaults resolve with no file and no environment");
	CHECK_STR(cfg.provider, "openai", "default provider is openai");
	CHECK_STR(cfg.base_url, "https://api.openai.com/v1", "default openai base URL");
	CHECK(cfg.model == NULL && cfg.api_key == NULL, "no default model or key");
	CHECK_STR(cfg.python, "python3", "default python");
	config_free(&cfg);

	path = write_tmp("{\"provider\": \"anthropic\", \"model\": \"file-model\", \"temperature\": 0.1,"
			 " \"max_output_tokens\": 100, \"prices\": {\"file-model\": {\"input\": 1, \"output\": 2}}}");
	setenv("EGG_CONFIG", path, 1);
	setenv("EGG_MODEL", "env-model", 1);
	setenv("ANTHROPIC_API_KEY", "sk-ant-unit", 1);
	config_init(&cfg);
	config_set_flag(&cfg, "model", "flag-model");
	CHECK(config_resolve(&cfg) == 0, "a valid config file resolves");
	CHECK_STR(cfg.provider, "anthropic", "the file sets the provider");
	CHECK_STR(cfg.base_url, "https://api.anthropic.com", "anthropic's default base URL follows the provider");
	CHECK_STR(cfg.model, "flag-model", "a flag beats the environment and the file");
	CHECK(cfg.temperature == 0.1 && cfg.max_output_tokens == 100, "numbers come from the file");
	CHECK_STR(cfg.api_key, "sk-ant-unit", "the provider's key variable is used when EGG_API_KEY is unset");
	CHECK(llm_price(&cfg, "file-model-2025", &(struct llm_tokens){ 1000000, 0, 0, 1000000 }, NULL) == 3.0,
	      "the config file's price table is used, by model-name prefix");
	config_free(&cfg);
	config_init(&cfg);
	CHECK(config_resolve(&cfg) == 0 && !strcmp(cfg.model, "env-model"),
	      "the environment beats the file");
	config_free(&cfg);
	unlink(path);
	free(path);
	unsetenv("EGG_MODEL");

	path = write_tmp("{\"model\": \"m\", \"api_key\": \"sk-nope\"}");
	setenv("EGG_CONFIG", path, 1);
	config_init(&cfg);
	CHECK(config_resolve(&cfg) == -1 && err_kind() == ERR_INPUT && strstr(err_msg(), "environment only"),
	      "an API key in the config file is refused");
	config_free(&cfg);
	unlink(path);
	free(path);

	path = write_tmp("{\"modle\": \"m\"}");
	setenv("EGG_CONFIG", path, 1);
	config_init(&cfg);
	CHECK(config_resolve(&cfg) == -1 && strstr(err_msg(), "unknown setting 'modle'"),
	      "a misspelt setting is refused by name");
	config_free(&cfg);
	unlink(path);
	free(path);

	path = write_tmp("{\"model\": \"m\",,}");
	setenv("EGG_CONFIG", path, 1);
	config_init(&cfg);
	CHECK(config_resolve(&cfg) == -1 && strstr(err_msg(), "line 1"),
	      "malformed JSON in the config file is reported with its line");
	config_free(&cfg);
	unlink(path);
	free(path);

	setenv("EGG_CONFIG", "/nonexistent/egg.json", 1);
	config_init(&cfg);
	CHECK(config_resolve(&cfg) == -1 && strstr(err_msg(), "no such file"),
	      "an explicit config file that does not exist is an error");
	config_free(&cfg);
	unsetenv("EGG_CONFIG");

	setenv("EGG_TEMPERATURE", "hot", 1);
	config_init(&cfg);
	CHECK(config_resolve(&cfg) == -1 && strstr(err_msg(), "EGG_TEMPERATURE"),
	      "a malformed number in the environment names the variable");
	config_free(&cfg);
	clear_env();
	err_clear();
}
