"""
The sandbox tool calls run in: worker processes with a timeout, so that a call that hangs, even inside C code,
is killed and answered with an error instead of stalling training.

A ToolError raised by a tool becomes {"error": message, "hint": hint} for the model to read; any other
exception becomes {"error": "tool failed: <type>"}; a timeout becomes {"error": "timeout", ...}. The tools
themselves (the registry, name -> function) are given by the caller: trainer/train_agent.py's MOCK_RESULTS.
"""
import json
import multiprocessing
import os
import signal
import threading

MAX_TOOL_OUTPUT_CHARS = 4000  # a result longer than this (as JSON) is cut before it is tokenized
PARENT_CHECK_S = 1.0  # an idle worker checks this often that its parent is alive


class ToolError(Exception):
    """A tool call the tool cannot serve; the message (and hint) go back to the model as {"error": ...}."""

    def __init__(self, message, hint=None):
        super().__init__(message)
        self.hint = hint



def _run_tool(registry, name, args):
    try:
        return registry[name](args)
    except ToolError as e:
        result = {"error": str(e)}
        if e.hint:
            result["hint"] = e.hint
        return result


class _Stop(BaseException):  # not an Exception: no `except Exception` may swallow it
    """SIGTERM reached an idle worker: it exits."""


def _tool_worker(conn, registry, inherited, parent_pid):
    """Body of a tool worker process: run calls until the pipe closes, the parent dies or SIGTERM comes.
    Any failure becomes an error object."""
    # Ctrl-C reaches the whole process group; the trainer finishes its step (with these workers) before it
    # exits, so workers ignore it. SIGTERM reaches the group too when a run is stopped (`timeout`, `kill --
    # -PGID`): a call in flight is finished and answered first, so the trainer's last step reads real results
    # (the trainer's own handler, inherited by the fork, is replaced; a timed-out call is killed by SIGKILL).
    busy, stop = [False], [False]

    def on_term(signum, frame):
        if not busy[0]:
            raise _Stop
        stop[0] = True

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, on_term)
    for other in inherited:  # the parent's pipe ends a fork copied: held here, no pipe would ever see EOF
        other.close()
    try:
        while not stop[0]:
            _serve_one(conn, registry, parent_pid, busy)
    except (_Stop, EOFError, OSError, ValueError):
        return


def _serve_one(conn, registry, parent_pid, busy):
    """Wait for one call and answer it (busy while a call is held). EOFError: the parent is gone."""
    busy[0] = False
    while not conn.poll(PARENT_CHECK_S):
        if os.getppid() != parent_pid:  # the parent died (killed -9: no EOF if a fd leaked)
            raise EOFError
    busy[0] = True
    payload = conn.recv()
    try:
        name, args = json.loads(payload)
        result = _run_tool(registry, name, args)
        if not isinstance(result, dict):
            result = {"result": result}
        reply = json.dumps(result, ensure_ascii=False)
    except Exception as e:  # a bug in a tool must not kill the worker; the model sees what happened
        reply = json.dumps({"error": f"tool failed: {type(e).__name__}"})
    conn.send(reply)


class ToolRunner:
    """Runs tool calls in worker processes, so a call that hangs, even inside C code (9**9**9), is killed at
    its timeout on any OS and from any thread. Calls and results travel as JSON text. Workers are reused
    (each holds the tool tables as they were when it started); one that timed out or died is replaced.
    Thread-safe: concurrent callers get different workers."""

    def __init__(self, registry: dict, max_idle: int = 4):
        self.registry = registry  # tool name -> function(args) -> dict
        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.max_idle = max_idle
        self.idle = []
        self.lock = threading.Lock()
        self.killed = 0  # workers killed at a timeout (for the logs)
        self.conns = set()  # the parent's ends of every live worker's pipe

    def _start(self):
        parent, child = self.ctx.Pipe()
        with self.lock:
            self.conns.add(parent)
            # a forked worker inherits all of them; it closes them (a spawned one inherits none)
            inherited = list(self.conns) if self.ctx.get_start_method() == "fork" else []
        proc = self.ctx.Process(target=_tool_worker, args=(child, self.registry, inherited, os.getpid()),
                                daemon=True, name="tool-worker")
        proc.start()
        child.close()
        return proc, parent

    def _kill(self, worker):
        proc, conn = worker
        with self.lock:
            self.conns.discard(conn)
        conn.close()
        proc.kill()
        proc.join(timeout=1.0)

    def call(self, name, args, timeout: float):
        """Run registry[name](args) in a worker; args must be JSON data (it travels as JSON text)."""
        payload = json.dumps([name, args], ensure_ascii=False)  # raises on non-JSON data, before any worker
        with self.lock:
            worker = self.idle.pop() if self.idle else None
        if worker is None or not worker[0].is_alive():
            worker = self._start()
        proc, conn = worker
        try:
            conn.send(payload)
            reply = conn.recv() if conn.poll(timeout) else None
        except (EOFError, OSError):
            self._kill(worker)
            return {"error": "tool failed: worker died"}
        if reply is None:
            self.killed += 1
            self._kill(worker)
            return {"error": "timeout", "hint": f"the call took longer than {timeout:g}s"}
        with self.lock:
            keep = len(self.idle) < self.max_idle
            if keep:
                self.idle.append(worker)
        if not keep:
            self._kill(worker)
        return json.loads(reply)

    def close(self):
        with self.lock:
            workers, self.idle = self.idle, []
        for worker in workers:
            self._kill(worker)


def cap_tool_result(result: dict, max_chars: int = MAX_TOOL_OUTPUT_CHARS) -> dict:
    """A result whose JSON is longer than max_chars is replaced by its cut text (the model sees the cut)."""
    text = json.dumps(result, ensure_ascii=False)
    if len(text) <= max_chars:
        return result
    return {"truncated": text[:max_chars]}
