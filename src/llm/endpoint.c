/* endpoint.c: the LLM endpoint's host: on this machine or not, and whether it resolves (endpoint.h). */
#include "endpoint.h"

#include <curl/curl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "../util/err.h"
#include "llm.h"
#include "provider.h"

/* The URL's host (IPv6 without brackets), or NULL when it does not parse. */
static char *url_host(const char *url)
{
	CURLU *u = curl_url();
	char *host = NULL, *out = NULL;
	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host && *host) {
		size_t n = strlen(host);
		out = host[0] == '[' && host[n - 1] == ']' ? xasprintf("%.*s", (int)n - 2, host + 1) : xstrdup(host);
	}
	curl_free(host);
	curl_url_cleanup(u);
	return out;
}

static int host_is_local(const char *host)
{
	return !strcmp(host, "localhost") || !strncmp(host, "127.", 4) || !strcmp(host, "::1");
}

int llm_url_is_local(const char *url)
{
	char *host = url_host(url);
	int local = host && host_is_local(host);
	free(host);
	return local;
}

/* endpoint.h says what is checked. */
int endpoint_check(const struct config *cfg)
{
	char *host = url_host(cfg->base_url);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	const char *proxy = getenv("https_proxy") ?: getenv("HTTPS_PROXY") ?: getenv("http_proxy") ?:
			    getenv("HTTP_PROXY") ?: getenv("all_proxy") ?: getenv("ALL_PROXY");
	int rc = 0;
	if (!host) {
		err_set(ERR_INPUT, "base URL '%s' is not a URL (set --base-url, EGG_BASE_URL or \"base_url\")",
			cfg->base_url);
		return -1;
	}
	if (!cfg->api_key && !host_is_local(host)) {
		err_set(ERR_INPUT, "no API key for %s: set EGG_API_KEY or %s (a server on localhost needs none)", host,
			config_provider(cfg->provider)->key_env);
		rc = -1;
	} else if (!(proxy && *proxy) && (rc = getaddrinfo(host, NULL, &hints, &ai)) != 0) {
		err_set(ERR_INFRA, "cannot resolve %s, the host of the base URL %s (%s): check --base-url and the "
			"network", host, cfg->base_url, gai_strerror(rc));
		rc = -1;
	}
	if (ai)
		freeaddrinfo(ai);
	free(host);
	return rc;
}

