"""Double-dummy analysis of a bridge deal: the tricks each declarer takes in each strain with
every card in view, and the par score and contracts (issue 24, "History, exports,
analysis").

The solver is Bo Haglund and Soren Hein's DDS, through endplay.  One table costs about 0.4 s
of CPU and importing endplay about 2.5 s and 97 MB (it imports matplotlib), so neither ever
happens in the server's own process: :func:`analyse` sends the deal to a pool of worker
processes (at most :data:`WORKERS`, started on first use with ``spawn``, so they inherit no
thread or socket of the server), each worker imports endplay once and runs DDS with one
thread, and at most :data:`MAX_QUEUED` deals wait or run at once.  This module imports
nothing heavy at its top: the server may import it at start.  Spawned workers import the
parent's main module again, so it must be guarded by ``if __name__ == "__main__"`` (as
manage.py, pytest and benchmarks/bridge_analysis.py are).  A caller that stops awaiting (a
cancelled task) frees its place in the queue while its deal may still be solved.

The result, JSON-able, to keep with the board::

    {"tricks": [[C, D, H, S, NT] for declarer N, E, S, W],  # 0-13 each
     "par": {"score": North-South's par score (negative when East-West's),
             "contracts": ["4SN=", "4SS=", "5DXE-2", ...]},   # contract, declarer, result
     "solver": "DDS (endplay 0.5.12)"}

Par is DDS's dealer par (``DealerParBin``): the contracts that neither side can improve on by
bidding on, given the dealer and the vulnerability; its score is North-South's.
"""
from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Sequence

from games.bridge import rules

#: Worker processes (each runs one DDS thread: at most this many cores busy with analysis).
WORKERS = 1
#: Deals waiting for or in analysis at once; :func:`analyse` refuses more (:class:`AnalysisBusy`).
MAX_QUEUED = 32

STRAINS = ("C", "D", "H", "S", "NT")


class AnalysisBusy(RuntimeError):
    """:data:`MAX_QUEUED` deals are already waiting: try later (the board keeps no analysis
    until then)."""


# --- in the worker --------------------------------------------------------------------------
def _worker_start() -> None:
    """Each worker's initializer: import endplay and give DDS one thread (it would otherwise
    size itself to every core)."""
    import endplay._dds as dds

    dds.SetMaxThreads(1)


def solve(hands: Sequence[Sequence[str]], dealer: int, vulnerability: str) -> dict:
    """The analysis of one deal (module docstring), computed here in the calling process:
    imports endplay, so call it only in a worker (or a test).  ``hands``: four lists of 13
    card names (N, E, S, W); ``dealer`` 0-3; ``vulnerability`` "None", "NS", "EW" or "Both".
    Raises ``ValueError`` if the hands are not a deal or the others are out of range."""
    masks = rules.hands_to_masks(hands)
    if dealer not in (0, 1, 2, 3) or vulnerability not in rules.VULNERABILITY_NAMES:
        raise ValueError("dealer is 0-3 and vulnerability one of None, NS, EW, Both")
    from endplay import __version__ as endplay_version
    from endplay.dds import calc_dd_table, par
    from endplay.types import Deal, Denom, Penalty, Player, Vul

    deal = Deal(_pbn(masks))
    table = calc_dd_table(deal)
    # endplay's Denom runs spades, hearts, diamonds, clubs, no-trump; ours clubs upwards
    denoms = (Denom.clubs, Denom.diamonds, Denom.hearts, Denom.spades, Denom.nt)
    tricks = [[table[denom, Player(seat)] for denom in denoms] for seat in range(4)]
    vul = {"None": Vul.none, "NS": Vul.ns, "EW": Vul.ew, "Both": Vul.both}[vulnerability]
    result = par(table, vul, Player(dealer))
    contracts = []
    for contract in result:
        if contract.level == 0:
            contracts.append("Pass")
            continue
        made = contract.result
        doubled = "X" if contract.penalty == Penalty.doubled else "XX" if contract.penalty == Penalty.redoubled else ""
        contracts.append(f"{contract.level}{STRAINS[denoms.index(contract.denom)]}{doubled}"
                         f"{rules.SEAT_LETTERS[int(contract.declarer)]}{'=' if made == 0 else f'{made:+d}'}")
    return {"tricks": tricks, "par": {"score": result.score, "contracts": contracts},
            "solver": f"DDS (endplay {endplay_version})"}


def _pbn(masks: Sequence[int]) -> str:
    """A deal for endplay: PBN's ``N:`` and the hands clockwise, spades first."""
    hands = []
    for mask in masks:
        suits = {s: "" for s in "SHDC"}
        for card in rules.mask_to_names(mask):
            suits[card[0]] += card[1]
        hands.append(".".join(suits[s] for s in "SHDC"))
    return "N:" + " ".join(hands)


def _solve_timed(hands, dealer: int, vulnerability: str) -> tuple[dict, float]:
    """:func:`solve` and the worker's CPU seconds for it."""
    start = time.process_time()
    result = solve(hands, dealer, vulnerability)
    return result, time.process_time() - start


# --- in the server --------------------------------------------------------------------------
_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_queued = 0


def _get_pool() -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=WORKERS, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_worker_start)
        return _pool


async def analyse_timed(hands, dealer: int, vulnerability: str) -> tuple[dict, float]:
    """:func:`analyse` and the CPU seconds the worker spent on it (for benchmarks)."""
    global _queued, _pool
    rules.hands_to_masks(hands)  # a bad deal is refused here, before it costs a worker
    with _lock:
        if _queued >= MAX_QUEUED:
            raise AnalysisBusy(f"{MAX_QUEUED} deals are already waiting for analysis")
        _queued += 1
    try:
        pool = _get_pool()
        return await asyncio.get_running_loop().run_in_executor(
            pool, _solve_timed, [list(h) for h in hands], dealer, vulnerability)
    except BrokenProcessPool:
        with _lock:  # a worker died (killed, out of memory): the next call starts a new pool
            if _pool is pool:
                _pool = None
        raise RuntimeError("the analysis worker stopped; try again") from None
    finally:
        with _lock:
            _queued -= 1


async def analyse(hands: Sequence[Sequence[str]], dealer: int, vulnerability: str) -> dict:
    """The analysis of one deal (shape in the module docstring), computed in a worker
    process: awaiting it never runs DDS on the event loop.  Arguments as :func:`solve`.
    Raises ``ValueError`` for a bad deal, :class:`AnalysisBusy` when :data:`MAX_QUEUED` deals
    are already queued, ``RuntimeError`` if the worker died."""
    result, _ = await analyse_timed(hands, dealer, vulnerability)
    return result


async def analyse_record(record: dict) -> dict:
    """:func:`analyse` of a finished board record (``hands``, ``dealer``, ``vulnerability``:
    :meth:`games.bridge.rules.BridgeState.board_records`)."""
    return await analyse(record["hands"], record["dealer"], record["vulnerability"])


def shutdown() -> None:
    """Stop the workers (the server's stop); a later :func:`analyse` starts new ones."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)
