"""Running a sweep's tasks: one after the other in the calling process (`serial`), or on an executor
(`parallel`: a process pool, which it restarts when a worker dies, or dask.distributed), with tasks cut to
about TASK_SECONDS from the cost per set measured on the first ones (`Tasks`), a task lost with its worker
submitted again, and the workers of an owned pool ended at once on Ctrl-C or an error (`_terminate`)."""
from __future__ import annotations

import concurrent.futures as cf
import math
import time

SERIAL_CHUNK = 256  # sets per task on one core
TASK_SECONDS = 1.0  # a parallel task's length: far above an executor's overhead per task (about 1 ms),
#                     short enough that the rows reach the disk as the sweep goes and a lost task costs little
PROBE = 4  # sets of each first task at most, from which the cost per set is measured
SHARES = 2  # a task holds at most 1/SHARES of a worker's share of the sets not yet taken


class Tasks:
    """The sets still to compute (runs (lo, hi) of indices, in order), cut into tasks as they are submitted:
    of `size` sets if given; otherwise the first tasks of PROBE sets, then of as many sets as last about
    TASK_SECONDS at the cost per set measured so far (`measured`: the least cost per set of any task, which
    a worker's start-up does not inflate), and never more than 1/SHARES of a worker's share of what remains
    (guided scheduling: the tasks shrink as the sweep nears its end, so that the workers finish together, and
    an expensive study's few sets are spread over every worker)."""

    def __init__(self, runs, size, width):
        self.runs = [(lo, hi) for lo, hi in runs if hi > lo][::-1]
        self.size, self.width = size, width
        self.left = sum(hi - lo for lo, hi in self.runs)
        self.total, self.cost, self.taken = self.left, None, 0

    def __bool__(self):
        return self.left > 0

    def take(self) -> tuple:
        """The next task's (lo, hi)."""
        if self.size:
            n = self.size
        else:
            n = max(1, min(PROBE if self.cost is None else int(TASK_SECONDS / self.cost),
                           math.ceil(self.left / (SHARES * self.width))))
        lo, hi = self.runs.pop()
        if hi - lo > n:
            self.runs.append((lo + n, hi))
            hi = lo + n
        self.left -= hi - lo
        self.taken += 1
        return lo, hi

    def measured(self, sets, seconds):
        """A task of `sets` sets took `seconds` in its worker."""
        if sets and seconds > 0:
            self.cost = min(self.cost or math.inf, seconds / sets)


def serial(tasks, task, accept, progress):
    """The tasks one after the other in this process (a chunk at a time, so a batched study batches);
    accept(lo, result) takes each."""
    with _bar(tasks.left, progress) as bar:
        while tasks:
            lo, hi = tasks.take()
            fn, *args = task(lo, hi)
            accept(lo, fn(*args))
            bar.update(hi - lo)


def executor_width(executor) -> int:
    """How many tasks the executor runs at once: a pool's workers, a dask cluster's threads (else 2)."""
    width = getattr(executor, "_max_workers", None)
    client = getattr(executor, "_client", None)  # a dask.distributed ClientExecutor
    if width is None and client is not None:
        try:
            width = sum(client.nthreads().values())
        except Exception:  # a client that cannot say: the default
            width = None
    return max(int(width or 2), 1)


def _timed(fn, *args):
    """fn(*args) and the seconds it took (in the worker): what task sizes are chosen from."""
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def parallel(tasks, task, accept, lost, executor, workers, retries, progress):
    """Run the tasks (`Tasks`, cut as they are submitted; `task(lo, hi)` -> (function, *arguments)) on the
    executor (or on a pool of `workers` processes owned here), at most twice as many in flight as the
    executor runs at once, handing each result to `accept(lo, result)` as it arrives. A task lost with its
    worker is submitted again, at most `retries` times, then given up (`lost(lo, hi, message)`). A process
    pool fails every task in flight when one worker dies, so after such a break the tasks then in flight
    are run again one at a time: only a task that breaks the pool on its own is charged an attempt."""
    owned = executor is None
    pool = cf.ProcessPoolExecutor(workers) if owned else executor
    window = 2 * tasks.width
    spans, attempts, suspects = {}, {}, []
    pending = {}  # future -> (task index, submitted alone)
    try:
        with _bar(tasks.left, progress) as bar:
            def submit(i, alone=False):
                fn, *args = task(*spans[i])
                pending[pool.submit(_timed, fn, *args)] = (i, alone)

            def give_up(i, failure):
                lo, hi = spans[i]
                lost(lo, hi, one_line(f"task lost {attempts[i]} times: {type(failure).__name__}: {failure}"))
                bar.update(hi - lo)

            while tasks or suspects or pending:
                if suspects:
                    if not pending:
                        submit(suspects.pop(0), alone=True)
                else:
                    while tasks and len(pending) < window:
                        i = tasks.taken
                        spans[i], attempts[i] = tasks.take(), 0
                        submit(i)
                done, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    if fut not in pending:  # failed with a pool already restarted
                        continue
                    i, alone = pending.pop(fut)
                    try:
                        result, seconds = fut.result()
                    except Exception as exc:
                        if not _lost(exc):  # the study itself failed (not with InputError): as on one core
                            raise
                        failure = exc
                    else:
                        lo, hi = spans.pop(i)
                        tasks.measured(hi - lo, seconds)
                        accept(lo, result)
                        bar.update(hi - lo)
                        continue
                    if isinstance(failure, cf.BrokenExecutor):
                        if not owned:
                            raise RuntimeError("the process pool broke (a worker died); pass workers=N for a pool "
                                               "that the sweep restarts, or a dask.distributed executor") from failure
                        in_flight = [j for j, _ in pending.values()]
                        pending.clear()
                        _shut_down(pool, cancel=True)
                        pool = cf.ProcessPoolExecutor(workers)
                        suspects += in_flight
                        if not alone:  # not known to be this task's fault
                            suspects.append(i)
                            continue
                    attempts[i] += 1  # this task lost its worker on its own
                    if attempts[i] > retries:
                        give_up(i, failure)
                    elif isinstance(failure, cf.BrokenExecutor):
                        suspects.append(i)
                    else:
                        submit(i)
    except BaseException:  # an error or Ctrl-C: the owned workers end now, not after their tasks
        if owned:
            _terminate(pool)
        else:
            for fut in pending:
                fut.cancel()
        raise
    if owned:
        pool.shutdown(wait=True)


def _terminate(pool, grace=1.0):
    """End the worker processes of a pool this sweep started, and the pool: SIGTERM, then SIGKILL for a
    worker still there after `grace` seconds. The tasks not yet sent stay unsent: the queue's feeder thread
    is not waited for at exit (it would block for ever on a pipe no worker reads). The pool's manager marks
    the futures left as broken (they are not cancelled here: Python 3.11's manager fails on a cancelled one)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        process.terminate()
    call_queue = getattr(pool, "_call_queue", None)
    if call_queue is not None:
        call_queue.cancel_join_thread()
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(grace)
    _shut_down(pool, grace)


def _shut_down(pool, grace=1.0, cancel=False):
    """Shut the pool down without waiting for its tasks (cancelling those not started if `cancel`), then wait
    up to `grace` seconds for its manager thread to end and take it out of concurrent.futures' registry of
    managers to wake at exit: the manager closes its wakeup pipe as it ends, and the exit hook would
    otherwise write into it (an 'Exception ignored ... OSError: Bad file descriptor' on stderr after an
    interrupted sweep)."""
    import concurrent.futures.process as cf_process

    manager = getattr(pool, "_executor_manager_thread", None)  # (shutdown forgets it)
    pool.shutdown(wait=False, cancel_futures=cancel)
    if manager is not None:
        manager.join(grace)
        if not manager.is_alive():
            getattr(cf_process, "_threads_wakeups", {}).pop(manager, None)


def _lost(exc) -> bool:
    """Whether a task's exception means its worker was lost (a dead process, a broken pool, a closed
    connection, a cancelled or killed task) rather than an error of the study itself."""
    if isinstance(exc, (cf.BrokenExecutor, cf.CancelledError, EOFError, ConnectionError)):
        return True
    return type(exc).__name__ in ("KilledWorker", "CommClosedError", "FutureCancelledError", "StreamClosedError")


def _bar(total, progress):
    from mechsym.core.progress import bar

    return bar(total, "sweep", "set", progress)


def one_line(message) -> str:
    """A message on one line (its whitespace runs to single spaces): a row's `message`."""
    return " ".join(str(message).split())
