"""Records which TF 2.4 names of the mapping exist on TF 2.4.0 and on TF 2.3.0, by import and by attribute.

Run it from the repository root under both Python 3.8 venvs (see docs/goldens.md):

    /tmp/tf24/bin/python tests/recorders/record_tf24_names.py   # tensorflow-cpu==2.4.0
    /tmp/tf23/bin/python tests/recorders/record_tf24_names.py   # tensorflow-cpu==2.3.0

For every `old` name of `lossscale_compat._mapping.RENAMES` it records whether `from <module> import <Name>`
works, whether `tf.<...>.<Name>` works after `import tensorflow as tf` (if not, the first namespace it does not
reach), and whether both give the same object, with the errors as TF raised them; and whether each module that
holds a mapped name (`_mapping.PUBLIC_MODULES` and TF <= 2.3's private modules) is importable. It writes the running version's section of tests/goldens/tf24_names.json and keeps the other's.
tests/legacy/test_install.py reads it: legacy mode must resolve every name the way TF did.

Neither way of reaching a name may make the other work (an import binds submodules as attributes; an
attribute can load a module lazily), so each module is imported in a fresh interpreter before anything else
touches TensorFlow's namespaces, and the attribute paths are walked in another fresh one.
"""

import json
import os
import re
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["CUDA_VISIBLE_DEVICES"] = ""

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(TESTS, "goldens", "tf24_names.json")
RECORDED_BY = "tests/recorders/record_tf24_names.py"
# TF 2.4.0 for TF 2.4's names; TF 2.3.0 for the private modules TF <= 2.3 code imported, gone in 2.4.
VERSIONS = ("2.4.0", "2.3.0")


def error_of(exc):
    """The exception as data, with object addresses and TensorFlow's install path replaced, for a stable diff."""
    message = re.sub(r"0x[0-9a-fA-F]+", "0x?", str(exc))
    tensorflow = sys.modules.get("tensorflow")
    if tensorflow is not None:
        message = message.replace(os.path.dirname(tensorflow.__file__), "<tensorflow>")
    return {"type": type(exc).__name__, "message": message}


def describe(value):
    """Where the object was defined, e.g. `tensorflow.python.training.experimental.loss_scale.FixedLossScale`."""
    return "%s.%s" % (getattr(value, "__module__", "?"), getattr(value, "__qualname__", type(value).__name__))


def by_attributes(tf, dotted):
    """`tf.a.b.Name`, as TF 2.4 code spells it after `import tensorflow as tf`."""
    value = tf
    for part in dotted.split(".")[1:]:
        value = getattr(value, part)
    return value


def first_missing(tf, dotted):
    """The shortest prefix of `dotted` that attribute access does not reach, e.g. `tensorflow.python`."""
    parts = dotted.split(".")
    for depth in range(2, len(parts) + 1):
        try:
            by_attributes(tf, ".".join(parts[:depth]))
        except Exception:  # noqa: BLE001
            return ".".join(parts[:depth])
    return None


def probe_attributes(names):
    """In a fresh interpreter: each name by attribute, nothing imported but `tensorflow`."""
    import tensorflow as tf

    out = {}
    for old in names:
        try:
            value = by_attributes(tf, old)
        except Exception as exc:  # noqa: BLE001 - any failure is the recorded fact
            out[old] = {"ok": False, "error": error_of(exc), "missing": first_missing(tf, old)}
        else:
            out[old] = {"ok": True, "object": describe(value), "callable": callable(value)}
    return out


def probe_module(module, names):
    """In a fresh interpreter: `import <module>`, then `from <module> import <Name>` for each name, then the same
    names by attribute, to tell whether both ways give the same object."""
    import importlib

    import tensorflow as tf

    out = {"module": {"importable": True}, "names": {}}
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001
        out["module"] = {"importable": False, "error": error_of(exc)}
    for name in names:
        namespace = {}
        try:
            exec("from %s import %s as value" % (module, name), namespace)
        except Exception as exc:  # noqa: BLE001
            out["names"][name] = {"ok": False, "error": error_of(exc)}
            continue
        imported = namespace["value"]
        record = {"ok": True, "object": describe(imported), "callable": callable(imported)}
        try:
            record["same_object_by_attribute"] = by_attributes(tf, "%s.%s" % (module, name)) is imported
        except Exception:  # noqa: BLE001 - the fresh attribute probe records why
            record["same_object_by_attribute"] = False
        out["names"][name] = record
    return out


def run_probe(*args):
    """Runs this script's probe `args` in a fresh interpreter and returns what it printed (JSON, last line)."""
    done = subprocess.run([sys.executable, os.path.abspath(__file__), *args], check=True, stdout=subprocess.PIPE,
                          universal_newlines=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def record(renames, public_modules):
    """This TensorFlow's section of the golden."""
    olds = [rename.old for rename in renames]
    by_module = {}
    for old in olds:
        module, name = old.rsplit(".", 1)
        by_module.setdefault(module, []).append(name)
    attributes = run_probe("--attributes", *olds)
    imports = {module: run_probe("--module", module, *names) for module, names in sorted(by_module.items())}
    names = {}
    for old in olds:
        module, name = old.rsplit(".", 1)
        imported, attribute = imports[module]["names"][name], attributes[old]
        entry = {"by_import": imported["ok"], "by_attribute": attribute["ok"],
                 "same_object": imported["ok"] and attribute["ok"] and imported["same_object_by_attribute"]}
        for way, result in (("import", imported), ("attribute", attribute)):
            if result["ok"]:
                entry["%s_object" % way] = result["object"]
                entry["%s_callable" % way] = result["callable"]
            else:
                entry["%s_error" % way] = result["error"]
        if not attribute["ok"]:
            entry["attribute_missing"] = attribute["missing"]
        names[old] = entry
    modules = {}
    for module in sorted(by_module):
        modules[module] = dict(imports[module]["module"], public_module=module in public_modules)
    return names, modules


def main():
    if sys.argv[1:2] == ["--attributes"]:
        print(json.dumps(probe_attributes(sys.argv[2:])))
        return
    if sys.argv[1:2] == ["--module"]:
        print(json.dumps(probe_module(sys.argv[2], sys.argv[3:])))
        return
    # The mapping is standard library only (the CLI imports it); import it before TensorFlow, so that
    # lossscale_compat's package does not load its TensorFlow-dependent optimizers.
    sys.path.insert(0, os.path.dirname(TESTS))
    from lossscale_compat import _mapping

    assert "tensorflow" not in sys.modules, "lossscale_compat._mapping must not import TensorFlow"
    import tensorflow as tf

    if tf.__version__ not in VERSIONS:
        sys.exit("record_tf24_names.py records TF %s, not %s" % (" and ".join(VERSIONS), tf.__version__))
    names, modules = record(_mapping.RENAMES, _mapping.PUBLIC_MODULES)
    goldens = {}
    if os.path.exists(GOLDEN):
        with open(GOLDEN) as f:
            goldens = json.load(f)
    goldens[tf.__version__] = {
        "meta": {"tensorflow": tf.__version__, "git_version": tf.version.GIT_VERSION,
                 "python": sys.version.split()[0], "recorded_by": RECORDED_BY},
        "names": names,
        "modules": modules,
    }
    with open(GOLDEN, "w") as f:
        json.dump({version: goldens[version] for version in sorted(goldens, reverse=True)}, f, indent=1)
        f.write("\n")
    resolved = sum(entry["by_import"] or entry["by_attribute"] for entry in names.values())
    print("wrote TF %s's section of %s: %d of %d names resolve" % (tf.__version__, GOLDEN, resolved, len(names)))


if __name__ == "__main__":
    main()
