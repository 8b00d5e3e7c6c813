"""What the tests of scripts/ share: a script under test run as a subprocess, checks that
collect their failures, and the exit status that reports them."""
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAILED: {what}")


def run(script, *args):
    """Runs the script with this interpreter: (exit status, stdout, stderr)."""
    p = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def finish():
    print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
    sys.exit(1 if failures else 0)
