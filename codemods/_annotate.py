"""`--annotate` and `--strip-annotations`: the warnings of a run kept in the files as `# lossscale-compat:` comments.

An annotation goes at the end of the first line, from the line the warning names on, where a comment may end a line:
the warning's own line, unless that line ends inside a string or with a backslash, where the comment goes at the end
of the string or of the continued line. Only comments are added or removed, so the file still compiles to the same
code, and the codemod, run again, changes nothing else.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable

from . import _warnings as w

PREFIX = "# lossscale-compat: "
# One annotation inside a comment: the prefix, a code and a short text, up to the next `#` or the end of the line.
ANNOTATION = re.compile(r"[ \t]*# lossscale-compat: LSC\d{3}\b[^#\r\n]*")
SHORT_TEXT_LIMIT = 72
# A few words for each code; codes missing here get the first clause of their message, cut to SHORT_TEXT_LIMIT.
SHORT_TEXTS = {
    w.AMBIGUOUS_NAME: "name rebound or ambiguous here; migrate by hand",
    w.STAR_ARGS: "*args/**kwargs; migrate by hand",
    w.POLICY_LOSS_SCALE: "reads the global policy's loss_scale; migrate by hand",
    w.UNSCALED_GRADIENTS_USED: "unscaled gradients used elsewhere; TF 2.4's contract kept",
    w.GRAPH_REWRITE_NOTE: "the graph rewrite is gone; the optimizer is wrapped explicitly",
    w.SHIM_NOTE: "no modern equivalent; now lossscale_compat's class",
    w.UNSUPPORTED_USE: "no rule for this use; migrate by hand",
    w.NAME_CLASH: "the modern name would clash here; migrate by hand",
    w.BAD_ARGUMENTS: "arguments do not match TF 2.4's signature; left alone",
    w.RECEIVER_NOT_PROVEN: "optimizer not traced to its construction; loop left alone",
    w.DISABLE_VALUE_USED: "disable_mixed_precision_graph_rewrite used as a value; left alone",
    w.TF1_LOSS_SCALE_OPTIMIZER: "TF1 MixedPrecisionLossScaleOptimizer; no modern equivalent",
    w.DISABLE_REMOVED_NOTE: "the graph rewrite is gone; nothing to disable",
    w.ITERATIONS_NOTE: "Keras 3: skipped steps no longer advance iterations",
    w.OPTIMIZER_SHIM_NOTE: "scale not provably modern; lossscale_compat's optimizer kept",
    w.LOOP_SHIM_NOTE: "custom loop: KerasLossScaleOptimizer keeps TF 2.4's contract",
    w.SCALE_READ_NOTE: "loss_scale read renamed dynamic_scale",
    w.IMPORT_KEPT: "import kept: some uses were left alone",
    w.GRADIENTS_CLIPPED: "unscaled gradients clipped before apply_gradients",
    w.GRADIENTS_NORM_TAKEN: "a norm is taken of the unscaled gradients",
    w.GRADIENTS_ACCUMULATED: "unscaled gradients accumulated across steps",
    w.GRADIENTS_LOGGED: "unscaled gradients logged or printed",
    w.TF1_KEPT_NOTE: "TF1 code kept on tf.compat.v1.mixed_precision",
    w.ESCAPING_SHIM_NOTE: "optimizer leaves this module; KerasLossScaleOptimizer kept",
    w.SCALE_READ_NOT_PROVEN: "loss_scale read of an optimizer not proven ours; left alone",
    w.CLASS_SHIM_NOTE: "class kept as a value; now lossscale_compat's class",
    w.UNTRACED_LOOP_NOTE: "untraced optimizer's loop rewritten for Keras 3; check it",
    w.GRAPH_REWRITE_FALLBACK_NOTE: "graph rewrite now lossscale_compat's run-time fallback",
    w.POLICY_FALLBACK_NOTE: "Policy with a loss scale; now lossscale_compat.Policy",
    w.CLASS_CHECK_FALLBACK_NOTE: "isinstance now checks AnyLossScaleOptimizer",
    w.MODULE_FALLBACK_NOTE: "experimental module; now lossscale_compat.keras_experimental",
    w.CONFIG_EQUIVALENCE_NOTE: "get_config() == now assert_config_equivalent",
    w.CONFIG_COMPARED: "get_config() compared with ==; never equal on Keras 3",
    w.PRIVATE_IMPORT_NOTE: "private Keras import; now lossscale_compat's names",
    w.UNSCALED_APPLY_SHIM_NOTE: "apply_gradients without a scaled loss; TF 2.4's class kept",
    w.ITERATIONS_READ_NOTE: "Keras 3: iterations leaves out skipped steps",
    w.GET_GRADIENTS_GONE: "get_gradients is gone from Keras 3's LossScaleOptimizer",
    w.CHECKPOINT_SHIM_NOTE: "checkpointed: KerasLossScaleOptimizer keeps TF 2.4's names",
    w.FINAL_CLASS_SHIM_NOTE: "now KerasLossScaleOptimizer: the loop keeps TF 2.4's methods",
    w.VALUE_FALLBACK_NOTE: "used as a value; now lossscale_compat's object",
    w.GRAPH_REWRITE_SHIM_NOTE: "graph rewrite kept on lossscale_compat (scale not provable)",
}


def short_text(code: str) -> str:
    """A few words on one line for `code`, without `#`: its entry in SHORT_TEXTS, else its message's first clause."""
    text = SHORT_TEXTS.get(code) or re.split(r"(?<=[.;:,])\s", w.MESSAGES.get(code, "see docs/codemod.md"))[0]
    text = " ".join(text.replace("#", "").split()).rstrip(".:;,")
    if len(text) > SHORT_TEXT_LIMIT:
        text = text[: SHORT_TEXT_LIMIT - 3].rsplit(" ", 1)[0] + "..."
    return text


def annotation(code: str) -> str:
    """The comment for one warning: `# lossscale-compat: CODE short text`."""
    return f"{PREFIX}{code} {short_text(code)}"


def _decode(data: bytes) -> tuple[str, str] | None:
    """The text and its encoding, or None where an annotation cannot be written in that encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        if "#".encode(encoding.replace("-sig", "")) != b"#":  # UTF-8 with a BOM: kept, as `encode` writes it
            return None
        return data.decode(encoding), encoding
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None


def _line_ends(text: str) -> dict[int, tuple[int, str]] | None:
    """For each line a comment may end: (the column where it may go, the comment already there, or "")."""
    ends: dict[int, tuple[int, str]] = {}
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string
            elif token.type in (tokenize.NL, tokenize.NEWLINE):
                row, col = token.start
                ends[row] = (col, comments.get(row, ""))
    except (tokenize.TokenError, SyntaxError):
        return None
    return ends


def _lines(text: str) -> list[str]:
    """The lines as Python counts them, each with its line break."""
    return io.StringIO(text, newline="").readlines()


def _read(data: bytes) -> tuple[list[str], dict[int, tuple[int, str]], str] | None:
    """(the lines, where each line's code ends with its comment, the encoding), or None where no comment can go."""
    decoded = _decode(data)
    if decoded is None:
        return None
    text, encoding = decoded
    ends = _line_ends(text)
    return None if ends is None else (_lines(text), ends, encoding)


def annotate(data: bytes, findings: Iterable[w.Finding]) -> bytes:
    """Returns `data` with a comment for each LSC1xx finding not annotated yet (`data` itself where none can go)."""
    read = _read(data)
    if read is None:
        return data
    lines, ends, encoding = read
    added: dict[int, list[str]] = {}
    for finding in sorted(findings, key=lambda f: (f.line, f.code)):
        if not finding.code.startswith("LSC1"):
            continue
        row = next((r for r in range(finding.line, len(lines) + 1) if r in ends), None)
        if row is None:
            continue
        comment = ends[row][1]
        if f"{PREFIX}{finding.code} " in comment or finding.code in added.get(row, []):
            continue
        added.setdefault(row, []).append(finding.code)
    if not added:
        return data
    for row, codes in added.items():
        col, _ = ends[row]
        line = lines[row - 1]
        comments = "".join(f"  {annotation(code)}" for code in codes)
        lines[row - 1] = line[:col].rstrip(" \t") + comments + line[col:] if col else comments.lstrip() + line
    return "".join(lines).encode(encoding)


def strip(data: bytes) -> bytes:
    """Returns `data` without its `# lossscale-compat:` annotations (comments only, never a string's text)."""
    read = _read(data)
    if read is None:
        return data
    lines, ends, encoding = read
    changed = False
    for row, (col, comment) in ends.items():
        if PREFIX not in comment or row > len(lines):
            continue
        line = lines[row - 1]
        start = col - len(comment)
        kept = ANNOTATION.sub("", comment)
        code = line[:start].rstrip(" \t") if not kept else line[:start]
        lines[row - 1] = code + kept + line[col:]
        changed = True
    return "".join(lines).encode(encoding) if changed else data
