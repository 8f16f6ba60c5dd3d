"""hlo_side.py: hlocheck's side of a comparison with XLA:CPU: hlo-run on N
devices (under mpirun, one rank per device; one device without it, MPI
starting as a world of one), its command for a reproducer, and the short
forms of the messages either side prints."""
import os
import shutil
import subprocess

HLO_RUN_SECONDS = 120


def mpirun_cmd(n):
    """mpirun for n ranks on a machine with fewer cores, as root too."""
    cmd = ["mpirun", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "-np", str(n)]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    return cmd


def hlo_run_cmd(build, n, module, outputs, R, P, inputs=None, save_inputs=None, seed=0, dist="uniform"):
    """hlo-run on n devices (R replicas x P partitions) writing outputs, on
    the .npy files in inputs, or on drawn inputs saved to save_inputs."""
    cmd = (mpirun_cmd(n) if n > 1 else []) + [
        os.path.join(build, "hlo-run"), module, "--outputs", outputs, "--replicas", str(R), "--partitions", str(P)]
    if inputs:
        return cmd + ["--inputs", inputs]
    return cmd + ["--seed", str(seed), "--dist", dist, "--save-inputs", save_inputs]


def hlo_run(build, n, module, outputs, R, P, inputs=None, save_inputs=None, seed=0, dist="uniform",
            timeout=HLO_RUN_SECONDS):
    """Runs hlo_run_cmd's command (the outputs, and saved inputs, made
    afresh): (exit status, standard error)."""
    shutil.rmtree(outputs, ignore_errors=True)
    if not inputs:
        shutil.rmtree(save_inputs, ignore_errors=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", HLOCHECK_THREADS="1")
    try:
        r = subprocess.run(hlo_run_cmd(build, n, module, outputs, R, P, inputs, save_inputs, seed, dist),
                           capture_output=True, text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL)
        return r.returncode, r.stderr
    except subprocess.TimeoutExpired:
        return 3, "hlo-run did not finish within %d s" % timeout


def first_line(text):
    """The first line of a tool's message (mpirun's banners left out)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("---")]
    return lines[0].strip() if lines else ""


def one_line(text, limit=600):
    """XLA's multi-line messages on one line."""
    text = " | ".join(ln.strip() for ln in text.splitlines() if ln.strip())
    return text if len(text) <= limit else text[:limit] + " ..."
