"""torchrun under ember: `python -m ember.run -m torch.distributed.run --nproc_per_node 2 prog.py`
(or `python -m ember.distributed.run ...`) starts the ranks with `ember launch`, which takes
torchrun's options (underscores or dashes) and runs each rank's Python program on ember."""
import os
import shutil
import sys


def _ember_cli():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.environ.get("EMBER_CLI"), shutil.which("ember"),
                      os.path.join(here, "..", "..", "..", "tools", "ember")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise RuntimeError("torch.distributed.run under ember needs the `ember` command (make build "
                       "installs it; or set EMBER_CLI to its path)")


def main(args=None):
    args = list(sys.argv[1:] if args is None else args)
    # torchrun spells options with underscores; ember launch with dashes. Options end at the
    # program (the first argument that is not an option or an option's value).
    out, i = [], 0
    flags = {"--standalone", "--no-python", "--no_python", "--run-path", "--run_path"}
    while i < len(args) and args[i].startswith("--"):
        name, eq, value = args[i].partition("=")
        name = name.replace("_", "-")
        if name == "--standalone":
            i += 1
            continue
        if name in flags:
            raise SystemExit(f"ember launch does not take {args[i]}")
        if eq:
            out.append(f"{name}={value}")
            i += 1
        else:
            out += [name, args[i + 1]]
            i += 2
    os.environ.setdefault("EMBER_PYTHON", sys.executable)
    os.execv(_ember_cli(), [_ember_cli(), "launch"] + out + args[i:])


if __name__ == "__main__":
    main()
