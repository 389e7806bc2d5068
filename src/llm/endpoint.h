/* endpoint.h: what egg checks of the LLM endpoint before any work. */
#ifndef EGG_ENDPOINT_H
#define EGG_ENDPOINT_H

#include "../config/config.h"

/*
 * Before any work is done: a remote endpoint needs a key, and its host must
 * resolve (a name that does not is not worth six attempts). Behind a proxy
 * the proxy resolves names, so the lookup is left to it. 0, or -1 with
 * ERR_INPUT (no URL, no key) or ERR_INFRA (the host does not resolve).
 */
int endpoint_check(const struct config *cfg);

#endif
