"""xla_pool.py: many modules through XLA:CPU with one jax import per device
count.  Each device count gets its own `xla_run.py --serve N` process (XLA
fixes the device count when its CPU client is made); a job that crashes XLA
(an abort, a CHECK failure) or runs past its time limit ends that server,
is reported as exit 3 with the tail of what XLA printed, and the next job
starts a new one.

    pool = XlaPool(python)               # the venv's python
    r = pool.run(module, inputs, outputs, replicas, partitions, timeout=120)
    r.status   0 done, 2 refused by XLA (parse, StableHLO, compile) or bad
               input, 3 failed, crashed or timed out
    r.message  XLA's message when status != 0
    r.times    seconds of parse, to_stablehlo, compile, inputs, execute, outputs
    pool.close()
"""
import collections
import json
import os
import select
import signal
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
Result = collections.namedtuple("Result", "status message times")
READY_SECONDS = 120         # importing jax and making the client


class _Server:
    def __init__(self, python, n_dev):
        self.n_dev = n_dev
        self.err = tempfile.TemporaryFile()
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            [python, os.path.join(HERE, "xla_run.py"), "--serve", str(n_dev), "--answer-fd", str(w)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.err,
            pass_fds=(w,), text=True, start_new_session=True)
        os.close(w)
        self.answers = os.fdopen(r, "r")
        self.eof = False
        ready = self._answer(READY_SECONDS)
        if ready is None or "ready" not in ready:
            raise RuntimeError("XLA:CPU did not start with %d devices: %s" % (n_dev, self.tail()))

    def _answer(self, timeout):
        """The next JSON line, or None when the server ended or timed out."""
        ready, _, _ = select.select([self.answers], [], [], timeout)
        if not ready:
            return None
        line = self.answers.readline()
        self.eof = not line
        return json.loads(line) if line else None

    def tail(self, lines=6):
        self.err.seek(0)
        text = self.err.read().decode("utf-8", "replace")
        self.err.seek(0, 2)
        keep = [ln for ln in text.splitlines() if ln.strip() and "GSPMD" not in ln]
        return " | ".join(keep[-lines:])

    def mark(self):
        self.err.seek(0, 2)
        return self.err.tell()

    def since(self, pos):
        self.err.seek(pos)
        text = self.err.read().decode("utf-8", "replace")
        self.err.seek(0, 2)
        return text

    def job(self, job, timeout):
        """The answer, or None when the server crashed or timed out (then it
        is stopped)."""
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        return self._answer(timeout)

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.answers.close()
        self.err.close()


class XlaPool:
    def __init__(self, python):
        self.python = python
        self.servers = {}

    def run(self, module, inputs, outputs, replicas, partitions, timeout=300):
        n_dev = replicas * partitions
        srv = self.servers.get(n_dev)
        if srv is None:
            try:
                srv = self.servers[n_dev] = _Server(self.python, n_dev)
            except RuntimeError as e:
                return Result(3, str(e), {})
        pos = srv.mark()
        t = time.perf_counter()
        ans = srv.job({"module": module, "inputs": inputs, "outputs": outputs,
                       "replicas": replicas, "partitions": partitions}, timeout)
        if ans is not None:
            return Result(ans["status"], ans["message"], ans["times"])
        # The server crashed (a CHECK failure aborts it) or hung.
        try:
            rc = srv.proc.wait(timeout=5) if srv.eof else None
        except subprocess.TimeoutExpired:
            rc = None
        printed = [ln for ln in srv.since(pos).splitlines() if ln.strip() and "GSPMD" not in ln]
        srv.stop()
        del self.servers[n_dev]
        if rc is None:
            why = "XLA did not finish within %d s" % timeout
        elif rc < 0:
            try:
                why = "XLA crashed (%s)" % signal.Signals(-rc).name
            except ValueError:
                why = "XLA crashed (signal %d)" % -rc
        else:
            why = "XLA's process ended with status %d" % rc
        # A CHECK failure's line says why; the stack trace under it does not.
        fatal = [ln.strip() for ln in printed if "Check failed" in ln or ln.startswith("F0") or ln.startswith("F1")]
        detail = " | ".join(fatal[:2] or printed[-4:])
        return Result(3, "%s after %.1f s%s" % (why, time.perf_counter() - t, (": " + detail) if detail else ""), {})

    def close(self):
        for srv in self.servers.values():
            srv.stop()
        self.servers = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
