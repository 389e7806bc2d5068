"""repeats.py: subgraphs that compute the same thing on the same shapes made one task.

Two subgraphs are the same task when their task files are the same text once
their own names are set aside: the names of their layers and parameters
(self.blocks_0_up, self.blocks_1_up), of their forward's arguments and of the
values it assigns. Everything else must match token for token: the layers'
constructors (so their shapes and attributes), the operations, every number;
and their inputs' shapes, dtypes and strides (not the distribution each is
drawn from: see _inputs_key). Weights are never part of a task file (a parameter's
stand-in is drawn with its layer's statistics: those are set aside) (each
occurrence binds its own when composed), so a ResNet stage or a transformer's
twelve layers become one task each, however many times they repeat.

Each subgraph of the plan gets "task" (the file of its first occurrence: the
task egg optimizes), and a repeat gets "task_params": its own tensors under
the names the first occurrence's file gives them, which is what the
composition binds to the shared kernel. The first occurrence gets
"occurrences" (how many subgraphs its task serves) and "task_share" (their
shares summed, when measured).
"""
from __future__ import annotations

import io
import keyword
import re
import tokenize

from .noise import noise_words


def _code(source: str) -> tuple[str, str]:
    """The task file without its docstring (which names the subgraph), cut
    before its get_inputs; and that get_inputs."""
    if source.startswith('"""'):
        end = source.find('"""', 3)
        if end >= 0:
            source = source[end + 3:]
    at = source.find("\ndef get_inputs(")
    return (source, "") if at < 0 else (source[:at], source[at:])


def _inputs_key(sg: dict) -> str:
    """What must match of two subgraphs' inputs, from the plan's records:
    their shapes, dtypes and strides (a kernel is judged in the layout the
    program feeds it) and which of the program's own inputs they are; not
    the distribution each is drawn from (an input after a ReLU in one block,
    after a pooling in the next). A kernel judged on its first occurrence's
    draws is judged again, in every occurrence, by the program's end-to-end
    evaluation."""
    layouts = [(l["dtype"], tuple(l["stride"])) if l else None for l in sg.get("input_layouts") or []]
    return repr((sg.get("input_shapes"), layouts, sg.get("input_program_index")))


def _own_names(tokens: list) -> set:
    """The file's own names: self's attributes, forward's arguments and the
    names its statements assign."""
    own, in_forward_args = set(), False
    for i, t in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        if t.type != tokenize.NAME or keyword.iskeyword(t.string):
            if in_forward_args and t.type == tokenize.OP and t.string == ")":
                in_forward_args = False
            continue
        if prev is not None and prev.string == "." and i >= 2 and tokens[i - 2].string == "self":
            own.add(t.string)
        elif in_forward_args and t.string != "self":
            own.add(t.string)
        elif t.string == "forward" and prev is not None and prev.string == "def":
            in_forward_args = True
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        at_start = prev is None or prev.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.NL) \
            or prev.string in (";", "=")
        if at_start and nxt is not None and nxt.string == "=" and t.string != "self":
            own.add(t.string)
    # What the file imports is never its own, even where a value shares the name.
    return own - _imported(tokens)


def _imported(tokens: list) -> set:
    """The names the file's import lines bind."""
    names, importing = set(), False
    for t in tokens:
        if t.type in (tokenize.NEWLINE, tokenize.NL):
            importing = False
        elif t.type == tokenize.NAME and t.string in ("import", "from") and t.start[1] == 0:
            importing = True
        elif importing and t.type == tokenize.NAME:
            names.add(t.string)
    return names


# A parameter's random stand-in (draws.param_expr): drawn with its
# own layer's statistics, which differ from layer to layer and are weights,
# not what the subgraph computes.
_STAND_IN = re.compile(r"(torch\.randn?\((?:[^()]|\([^()]*\))*\)) \* -?[\d.e+-]+ [+-] -?[\d.e+-]+")


def signature(source: str) -> tuple[str, dict]:
    """The file's text with its own names replaced by their order of
    appearance, and that renaming (own name -> placeholder)."""
    code = _STAND_IN.sub(r"\1 * @scale + @shift", _code(source)[0])
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    own = _own_names(tokens)
    names: dict = {}
    out = []
    for i, t in enumerate(tokens):
        s = t.string
        # An attribute of anything but self (torch.relu, x.shape) is not the
        # file's own name, even when a value is called so (relu = torch.relu(x)).
        attribute = i >= 1 and tokens[i - 1].string == "." and not (i >= 2 and tokens[i - 2].string == "self")
        if t.type == tokenize.NAME and s in own and not attribute:
            s = names.setdefault(s, f"@{len(names)}")
        elif t.type == tokenize.STRING and s[1:-1] in own and s[0] in "'\"":
            s = repr(names.setdefault(s[1:-1], f"@{len(names)}"))
        if t.type not in (tokenize.COMMENT, tokenize.NL):
            out.append(s)
    return " ".join(out), names


def _rename_key(key: str, mine: dict, theirs_back: dict) -> str | None:
    """A parameter key of this file ("blocks_1_up.weight") under the first
    occurrence's names ("blocks_0_up.weight"), or None."""
    head, dot, rest = key.partition(".")
    placeholder = mine.get(head)
    first = theirs_back.get(placeholder) if placeholder else None
    return first + dot + rest if first else None


def merge_repeats(plan: dict) -> None:
    """Marks each subgraph's task in `plan` (see the module's text), and
    each block's among the blocks (a block repeats a block). Repeats of one
    task measured far apart (noise.py) are each "noise", said so."""
    for part in (plan["subgraphs"], plan.get("blocks") or []):
        _merge(part)
        _repeats_noise(part)


def _repeats_noise(subgraphs: list) -> None:
    """The repeats of one task do the same work on the same shapes: their
    times in the program should agree. Where they do not (noise.NOISY),
    each occurrence says so, unless its own rounds already did."""
    times: dict = {}
    for sg in subgraphs:
        if not sg.get("glue") and sg.get("eager_ms") is not None:
            times.setdefault(sg["task"], []).append(sg["eager_ms"])
    for sg in subgraphs:
        ms = times.get(sg["task"], [])
        noise = noise_words(ms, f"the {len(ms)} repeats of its task") if len(ms) > 1 else None
        if noise and not sg.get("noise"):
            sg["noise"] = noise


def _merge(subgraphs: list) -> None:
    firsts: dict = {}
    for sg in subgraphs:
        sg["task"] = sg["file"]
        if sg.get("glue"):
            continue
        sig, names = signature(sg["source"])
        sig += _inputs_key(sg)
        first = firsts.get(sig)
        if first is None:
            firsts[sig] = (sg, names)
            sg["occurrences"] = 1
            sg["task_share"] = sg.get("share")
            continue
        rep, rep_names = first
        back = {v: k for k, v in rep_names.items()}
        mapped = {_rename_key(k, names, back): v for k, v in sg.get("params", {}).items()}
        if None in mapped or set(mapped) != set(rep.get("params", {})):
            firsts.setdefault(sig + "#" + sg["file"], (sg, names))
            sg["occurrences"] = 1
            sg["task_share"] = sg.get("share")
            continue
        sg["task"] = rep["file"]
        sg["task_params"] = mapped
        rep["occurrences"] += 1
        if rep.get("task_share") is not None and sg.get("share") is not None:
            rep["task_share"] += sg["share"]
        else:
            rep["task_share"] = None
