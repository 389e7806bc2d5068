#!/usr/bin/env bash
# t10-cli.sh: the command-line frame: help, version, the command table, usage errors.
. "$(dirname "$0")/../lib.sh"

run_egg --version
expect_rc 0 "egg --version succeeds"
expect_out '^egg [0-9]+\.[0-9]+\.[0-9]+$' "--version prints 'egg X.Y.Z'"

run_egg --help
expect_rc 0 "egg --help succeeds"
for c in chat doctor worker; do expect_out "^  $c " "--help lists '$c'"; done

run_egg
expect_rc 2 "egg with no command is a usage error"

run_egg frobnicate
expect_rc 2 "an unknown command"
expect_err "^egg: error: unknown command 'frobnicate'" "an unknown command names itself on one error line"
check "the error is exactly one line" test "$(wc -l <"$ERR")" -eq 1

run_egg --bogus
expect_rc 2 "an unknown global option"

run_egg chat --help
expect_rc 0 "egg chat --help succeeds"
expect_out "^usage: egg chat PROMPT" "chat --help shows the usage line"
expect_out "--system" "chat --help lists its own options"
expect_out "--model" "chat --help lists the shared LLM settings"

run_egg chat --bogus hi
expect_rc 2 "an unknown command option"
expect_err "^egg: error: unknown option '--bogus'" "the unknown option is named"

run_egg chat --llm-attempts many hi
expect_rc 2 "a malformed number"
expect_err "needs a whole number" "a malformed number says what it needs"

run_egg chat hi
expect_rc 2 "chat without a model is bad input"
expect_err "no model configured" "a missing model says how to set one"

mkdir -p "$XDG_CONFIG_HOME/egg"
echo '{"model": "m", "temprature": 1}' >"$XDG_CONFIG_HOME/egg/config.json"
run_egg chat hi
expect_rc 2 "a config file with an unknown setting"
expect_err "unknown setting 'temprature'" "the misspelt setting is named"
expect_err "did you mean 'temperature'\?" "and the setting it is close to suggested"
expect_err "\(the settings: provider, base_url, model, .*prices, request_rules\)" "and every setting listed"
run_egg doctor --json
check "egg doctor still runs with the bad config file and reports its error among the missing" python3 -c "
import json; d = json.load(open('$OUT'))
assert \"unknown setting 'temprature'\" in d['missing'][0] and not any(d['commands'].values()), d['missing']"
rm -rf "$XDG_CONFIG_HOME/egg"

# --- typos get a suggestion; a word near nothing gets none
run_egg optimise x.py
expect_rc 2 "a misspelt command is bad usage"
expect_err "unknown command 'optimise': did you mean 'optimize'\?" "a misspelt command gets the nearest one"
run_egg frobnicate
expect_err "^egg: error: unknown command 'frobnicate' \(see 'egg --help'\)$" "a word near no command gets no guess"
run_egg optimize --itres 3 x.py
expect_rc 2 "a misspelt flag is bad usage"
expect_err "unknown option '--itres' \(did you mean '--iters'\?\)" "a misspelt flag gets the nearest one"
run_egg eval --no-cahce a.py b.py
expect_err "did you mean '--no-cache'\?" "a swapped pair of letters is one edit"
run_egg eval --zzzzzz a.py b.py
expect_err "^egg: error: unknown option '--zzzzzz'$" "a flag near none gets no guess"

finish
