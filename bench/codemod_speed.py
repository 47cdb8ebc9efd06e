"""Prints codemod timings: a tree where every file holds legacy sites (built from the repo's TF 2.4 examples
and the codemod's corpus) with `--check`, `--write` and a second run over the migrated copy, in ms per line,
next to `tf_upgrade_v2` on the same tree when it is installed; one generated file with many legacy sites;
one legacy site followed by many top-level names, at two sizes;
and `migrate --check` over the installed keras and tf_keras next to grep and a naive libcst parse.

Run with the interpreter of an environment that has keras and tf_keras installed:
    python bench/codemod_speed.py [-j N] [--sites N] [--heavy-copies N] [--names N ...] [--only-sites]
        [--only-heavy] [--only-names]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _roots():
    roots = []
    for name in ("keras", "tf_keras"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            roots.append(next(iter(spec.submodule_search_locations)))
    return roots


_LAST_CPU = [0.0]  # CPU seconds (user + system) of the last `_timed` command and the processes it waited for


def _timed(command, **kwargs):
    import resource

    if "stdout" not in kwargs:
        kwargs["capture_output"] = True
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, check=False, **kwargs)  # callers print the exit code
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    _LAST_CPU[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, done


# One site the codemod rewrites and one it leaves alone with a warning: many identical unchanged lines are
# what made the old difflib line mapping quadratic.
SITE_PAIR = (
    b"opts.append(tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic'))\n"
    b"ok = isinstance(o, tf.keras.mixed_precision.experimental.LossScaleOptimizer)\n"
)


def _many_sites(sites: int, env) -> None:
    """Times the CLI on one file holding `sites` legacy sites (half rewritten, half warned about); past the default
    --max-file-size (1 MB), so it runs with no size bound."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "many_sites.py")
        data = b"import tensorflow as tf\n" + SITE_PAIR * (sites // 2)
        with open(path, "wb") as handle:
            handle.write(data)
        print(f"one file, {sites:,} legacy sites, {len(data) / 1e6:.1f} MB:")
        for mode in ("--check", "--diff", "--write"):
            seconds, done = _timed(
                [sys.executable, "-m", "lossscale_compat", "migrate", "--max-file-size", "0", *mode.split(), path],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            print(f"  migrate {mode}: {seconds:.2f} s, {_LAST_CPU[0]:.2f} s CPU (exit {done.returncode})")


ONE_SITE = b"import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n"


def _many_names(sizes, jobs: int, env) -> None:
    """Times `--check` on one legacy line followed by many plain top-level assignments, at each of `sizes` lines.

    Twice the lines should take about twice the time, with any `-j` (a filter of the big-file halves, since
    removed, once made it grow with the square of the size when `-j` was above 1).
    """
    with tempfile.TemporaryDirectory() as tmp:
        print(f"one legacy site + many top-level names, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}:")
        for lines in sizes:
            path = os.path.join(tmp, f"names_{lines}.py")
            body = b"".join(b"name_%d = %d\n" % (i, i) for i in range(lines))
            with open(path, "wb") as handle:
                handle.write(ONE_SITE + body)
            for mode in ("-j 1", f"-j {jobs}"):
                seconds, done = _timed(
                    [sys.executable, "-m", "lossscale_compat", "migrate", "--check", *mode.split(), path],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                print(
                    f"  {lines:,} lines, --check {mode}: {seconds:.2f} s = {seconds * 1e6 / lines:.1f} us/line, "
                    f"{_LAST_CPU[0]:.2f} s CPU (exit {done.returncode})"
                )


# The legacy-heavy tree: every file of these that the codemod would look at, copied `--heavy-copies` times.
HEAVY_SOURCES = ("examples/tf24", "examples/tf24_custom_loop.py", "examples/project", "tests/migrate/corpus")


def _heavy_sources():
    sys.path.insert(0, REPO)
    from lossscale_compat.codemods._engine import may_match

    out = []
    for source in HEAVY_SOURCES:
        path = os.path.join(REPO, source)
        names = sorted(os.listdir(path)) if os.path.isdir(path) else [os.path.basename(path)]
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        for name in names:
            full = os.path.join(folder, name)
            if name.endswith(".py") and os.path.isfile(full):
                with open(full, "rb") as handle:
                    data = handle.read()
                if may_match(data):
                    out.append((os.path.splitext(name)[0], data))
    return out


def _tf_upgrade_v2(given):
    if given:
        return given
    beside = os.path.join(os.path.dirname(sys.executable), "tf_upgrade_v2")
    return beside if os.path.exists(beside) else shutil.which("tf_upgrade_v2")


def _last_line(done) -> str:
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else ""


def _heavy(copies: int, jobs: int, env, tf_upgrade_v2) -> None:
    """Times the CLI on a tree where every file holds legacy sites: first run, then over its own output."""
    sources = _heavy_sources()
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "heavy")
        os.mkdir(tree)
        for copy in range(copies):
            for stem, data in sources:
                with open(os.path.join(tree, f"{stem}_{copy}.py"), "wb") as handle:
                    handle.write(data)
        lines = sum(data.count(b"\n") for _, data in sources) * copies
        print(
            f"legacy-heavy tree: {len(sources) * copies} files ({len(sources)} sources x {copies}), "
            f"{lines:,} lines, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}:"
        )

        def run(label, *args):
            seconds, done = _timed([sys.executable, "-m", "lossscale_compat", "migrate", *args], env=env)
            print(
                f"  {label}: {seconds:.2f} s = {seconds * 1000 / lines:.2f} ms/line, {_LAST_CPU[0]:.2f} s CPU "
                f"(exit {done.returncode}); "
                f"{_last_line(done)}"
            )
            return seconds

        run(f"migrate --check -j {jobs}", "--check", "-j", str(jobs), tree)
        if jobs != 1:
            run("migrate --check -j 1", "--check", "-j", "1", tree)
        first = run(f"migrate --write -j {jobs}", "--write", "-j", str(jobs), tree)
        second = run(f"second migrate --write -j {jobs} (over the migrated tree)", "--write", "-j", str(jobs), tree)
        print(f"  second run / first run: {second / first:.2f}")
        if tf_upgrade_v2:
            shutil.rmtree(tree)
            os.mkdir(tree)
            for copy in range(copies):
                for stem, data in sources:
                    with open(os.path.join(tree, f"{stem}_{copy}.py"), "wb") as handle:
                        handle.write(data)
            seconds, done = _timed(
                [
                    tf_upgrade_v2,
                    "--intree",
                    tree,
                    "--outtree",
                    os.path.join(tmp, "out"),
                    "--reportfile",
                    os.path.join(tmp, "report.txt"),
                ]
            )
            print(
                f"  tf_upgrade_v2 (one process; {tf_upgrade_v2}): {seconds:.2f} s = "
                f"{seconds * 1000 / lines:.2f} ms/line (exit {done.returncode})"
            )
        else:
            print("  tf_upgrade_v2: not found (pass --tf-upgrade-v2 PATH)")


def main() -> int:
    """Runs the three measurements and prints one line each."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--skip-naive", action="store_true", help="skip the (slow) naive libcst parse")
    parser.add_argument("--sites", type=int, default=20_000, help="legacy sites in the one-file case (0 skips it)")
    parser.add_argument("--only-sites", action="store_true", help="run only the one-file case")
    parser.add_argument(
        "--names",
        type=int,
        nargs="*",
        default=[25_000, 50_000],
        help="sizes in lines of the one-site + many-top-level-names file (none skips it)",
    )
    parser.add_argument("--only-names", action="store_true", help="run only the many-top-level-names file")
    parser.add_argument(
        "--heavy-copies",
        type=int,
        default=11,
        help="copies of each legacy source in the legacy-heavy tree (0 skips it)",
    )
    parser.add_argument("--only-heavy", action="store_true", help="run only the legacy-heavy tree")
    parser.add_argument(
        "--tf-upgrade-v2",
        default=None,
        help="tf_upgrade_v2 to time on the same tree (default: beside this interpreter, or on PATH)",
    )
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if args.names:
        _many_names(args.names, args.jobs, env)
    if args.only_names:
        return 0
    if args.heavy_copies and not args.only_sites:
        _heavy(args.heavy_copies, args.jobs, env, _tf_upgrade_v2(args.tf_upgrade_v2))
    if args.only_heavy:
        return 0
    if args.sites:
        _many_sites(args.sites, env)
    if args.only_sites:
        return 0
    roots = _roots()
    if not roots:
        print("neither keras nor tf_keras is installed in this interpreter's environment")
        return 2
    files = [os.path.join(d, f) for root in roots for d, _, names in os.walk(root) for f in names if f.endswith(".py")]
    print(f"trees: {', '.join(roots)} ({len(files)} .py files), {os.cpu_count()} CPUs")
    seconds, done = _timed(
        [sys.executable, "-m", "lossscale_compat", "migrate", "--check", "-j", str(args.jobs), *roots], env=env
    )
    print(
        f"migrate --check -j {args.jobs}: {seconds:.2f} s (exit {done.returncode}); "
        f"{done.stderr.decode().strip().splitlines()[-1]}"
    )
    seconds, _ = _timed(["grep", "-rlE", "mixed_precision|LossScale", *roots])
    print(f"grep -rlE 'mixed_precision|LossScale': {seconds:.2f} s")
    if not args.skip_naive:
        code = (
            "import sys, libcst\n"
            "for p in sys.argv[1:]:\n"
            "    try: libcst.parse_module(open(p, 'rb').read())\n"
            "    except Exception: pass\n"
        )
        seconds, _ = _timed([sys.executable, "-c", code, *files])
        print(f"naive libcst.parse_module of every file (1 process): {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
