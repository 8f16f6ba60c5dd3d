"""source_check.py: what make sections and make layers share: a check run
over src/ (or, with --self-test, over a small tree of its own whose answer
is known), its closing line, and make test's tally ("passed failed")."""
import os
import sys
import tempfile


def self_test(name, tree, check, want, what):
    """check run on tree (relative path -> text) must give want."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        for path, text in tree.items():
            os.makedirs(os.path.dirname(os.path.join(src, path)), exist_ok=True)
            with open(os.path.join(src, path), "w") as f:
                f.write(text)
        got = check(src, show=False)
    ok = got == want
    print(f"{name} self-test: {'ok' if ok else 'FAILED'} ({what}) = {got}, want {want}")
    return ok


def main(name, check, run_self_test, summary):
    """usage: SCRIPT [SRC_DIR] | --self-test.  With TALLY set, the self-test
    runs too and both count in the tally."""
    if sys.argv[1:] == ["--self-test"]:
        return 0 if run_self_test() else 1
    checked, bad = check(sys.argv[1] if len(sys.argv) > 1 else "src")
    ok = run_self_test() if os.environ.get("TALLY") else True
    print(f"{name}: " + summary(checked, bad))
    if os.environ.get("TALLY"):
        with open(os.environ["TALLY"], "a") as t:
            t.write(f"{int(not bad) + int(ok)} {int(bool(bad)) + int(not ok)}\n")
    return 1 if bad or not ok else 0
