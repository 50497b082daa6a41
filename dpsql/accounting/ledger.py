"""A durable privacy ledger, shared by every process that opens it: a SQLite file, or a
PostgreSQL database (``postgresql://USER@HOST:PORT/DB``) shared by several hosts.

Same interface as :class:`~dpsql.accounting.accountant.Accountant` (``total``, ``spent``,
``remaining``, ``charges``, ``check``, ``charge``), so a connection can use either, but
every spend is a committed row. ``charge`` checks and records in one write transaction
that holds the analyst's and every named dataset's lock (SQLite's one write lock; one
advisory lock per scope in PostgreSQL: :mod:`.store`), so processes racing for the last
of a budget cannot overdraw it; a charge that returned is on disk and survives a crash.
ε and δ are stored as the decimal text the caller wrote and summed as Fractions, exactly
as the Accountant does. This module is the budget logic; the store only keeps the rows.

Intended order for a question with a cached answer (*spend before reading*, and the
charge with its answer): ``hold`` right before the engine may read data
(``dpsql.statements``) commits a *hold* of the question's cost, counted as spent like a
charge; ``settle`` after the noise turns the hold into the charge and stores the answer,
in one transaction, then the answer is returned. A crash at any point therefore leaves
the charge and its answer both committed or neither; what it may leave is the hold, which
keeps the budget spent (the engine may have read data), until the same question is asked
again: a hold whose holder process is gone (``Store.holder``, ``Db.alive``) is taken over
by the next asker, who pays nothing more, so one question is paid once, crash or not.
While a live process holds a question, ``hold`` raises QuestionBusy (wait, then ask
again): servers asking one question at once are charged once and all get one answer. A
cancel or an error after ``hold`` settles the charge without an answer (it read data).
``charge`` is the same check and insert for a spend without a stored answer (grouping
sets, seeded runs, no cache). Re-asking a query whose key is cached returns the stored
noisy answer without any new charge (post-processing is free).

Every budget kind is kept: pure ε, (ε, δ), and ρ-zCDP (``Budget(rho=0.5, delta=1e-6)``).
Under a ρ budget each charge counts as approximate zCDP: its noise's ρ (a Laplace or any
pure ε-DP step ε²/2, a Gaussian with noise multiplier m 1/(2m²); Bun & Steinke 2016, Prop.
1.4 and 1.6), an (ε, δ) step (partition selection, or a charge recorded without its
mechanisms) ε²/2 and δ (an (ε, δ)-DP step is δ-approximately ε²/2-zCDP, and approximate
zCDP composes by adding ρ's and δ's; Bun & Steinke 2016, §8). A charge is accepted while
Σρ ≤ ρ and Σδ ≤ δ, exactly (ρ of a Gaussian from its multiplier rounded down one ulp).

Budgets are policy, stored in the file by whoever first opens it for an analyst (or a
dataset). Opening it later with a *different* budget raises PrivacyError rather than
silently raising or lowering the limit: pass the same budget, ``budget=None`` to use
the stored one, or ``reset_budget=True`` to replace it (what was spent stays spent). A
dataset budget bounds the spend of all analysts on that dataset together.

Schema (version 3): ``budgets(scope, name, epsilon, delta, rho, updated_at)`` -- exactly
one of ``epsilon`` and ``rho`` set --, ``charges(id, analyst, dataset, query, query_hash, plan,
mechanism, epsilon, delta, rho, created_at, status, events)`` -- append-only, enforced by
triggers; refused charges are not recorded and ``status`` is always ``'spent'``;
``events`` (the released mechanisms) is what ρ budgets and the zCDP filter compose, the
``rho`` column is the caller's note for the audit log --, ``cache(key, analyst,
result, created_at)`` and ``holds(key, holder, analyst, dataset, epsilon, delta, events,
created_at)``. Open one Ledger per process (not across fork); one Ledger may be
shared by threads. The same doctest, with ``path`` a PostgreSQL URL, runs the same.

>>> import tempfile
>>> from pathlib import Path
>>> from dpsql.accounting.values import Budget
>>> tmp = tempfile.TemporaryDirectory()
>>> path = Path(tmp.name) / "ledger.db"
>>> with Ledger(path, budget=Budget(epsilon=0.3), analyst="alice") as ledger:
...     for _ in range(3):
...         _ = ledger.charge(0.1, 0.0, query="SELECT COUNT(*) FROM visits")
>>> reopened = Ledger(path, budget=None, analyst="alice")
>>> reopened.spent, len(reopened.charges), reopened.history()[0]["epsilon"]
(Cost(epsilon=0.3, delta=0.0), 3, 0.1)
>>> reopened.charge(0.1, 0.0, query="one too many")
Traceback (most recent call last):
...
dpsql.errors.BudgetExceededError: query refused, nothing was spent: epsilon 0.1 > remaining 0 ...
>>> reopened.close(); tmp.cleanup()
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar

from dpsql.accounting.composition import MechanismEvent
from dpsql.accounting.store import Db, NoLedger, Store, open_store
from dpsql.accounting.values import DATASETS_SEPARATOR, Budget, Cost, without_delta
from dpsql.errors import BudgetExceededError, PrivacyError
from dpsql.exact import as_fraction, float_at_least, nearest_float

COLUMNS = ("id, analyst, dataset, query, query_hash, plan, mechanism, epsilon, delta, rho, "
           "created_at, status, events")
T = TypeVar("T")


@dataclass(frozen=True)
class LedgerCharge:
    """One committed spend, as stored (``epsilon``/``delta`` round-trip the decimal text)."""

    id: int
    analyst: str
    dataset: str
    query: str
    query_hash: str
    plan: str
    mechanism: str
    epsilon: float
    delta: float
    rho: float | None
    created_at: float
    status: str
    events_json: str = "[]"

    @property
    def events(self) -> tuple[MechanismEvent, ...]:
        """The released mechanisms, for zCDP limits and reports."""
        return tuple(MechanismEvent(**e) for e in json.loads(self.events_json))

    @property
    def at(self) -> float:
        """When it was charged (the name :class:`~dpsql.accounting.accountant.Charge` uses)."""
        return self.created_at


class Ledger:
    """Spends of one analyst against budgets stored in a ledger (see the module doc).

    ``path``: a SQLite file, or a ``postgresql://USER@HOST:PORT/DB`` URL (the ``postgres``
    extra's driver is imported then only)."""

    def __init__(self, path: str | Path, *, budget: Budget | None, analyst: str = "default",
                 dataset_budgets: Mapping[str, Budget] | None = None,
                 reset_budget: bool = False, timeout: float = 30.0) -> None:
        if not isinstance(analyst, str) or not analyst:
            raise PrivacyError(f"analyst={analyst!r}: must be a non-empty string")
        self.analyst = analyst
        self._lock = threading.Lock()
        # Running sums per (scope, name), valid up to a charge id. Exact because charges
        # are append-only and every charge counting against a scope is inserted and
        # committed under that scope's write lock, so ids grow in commit order per scope.
        self._sums: dict[tuple[str, str], Spent] = {}
        self._store: Store = open_store(path, timeout=timeout)
        self.where = self._store.location

        def setup(db: Db) -> None:
            self._settle(db, "analyst", analyst, budget, reset_budget)
            for name, limit in (dataset_budgets or {}).items():
                self._settle(db, "dataset", name, limit, reset_budget)

        try:
            self._run(setup, transaction="write")
        except BaseException:
            self._store.close()
            raise

    @property
    def total(self) -> Budget:
        """This analyst's total budget, as stored in the file now."""
        return self._run(lambda db: _budget(db, "analyst", self.analyst))

    @property
    def spent(self) -> Cost:
        """Σε and Σδ as charged; under a ρ budget, δ is the approximate-zCDP δ (see above)."""
        def both(db: Db) -> tuple[Budget, Spent]:
            return _budget(db, "analyst", self.analyst), self._spent(db, "analyst",
                                                                     self.analyst)

        total, spent = self._run(both)
        delta = spent.delta if total.rho is None else spent.zcdp_delta
        return Cost(nearest_float(spent.epsilon), nearest_float(delta))

    @property
    def rho_spent(self) -> float:
        """Σρ of the charges as approximate zCDP (the measure of a ρ budget), rounded up."""
        spent = self._run(lambda db: self._spent(db, "analyst", self.analyst))
        return float_at_least(spent.rho)

    @property
    def remaining(self) -> Cost:
        """What is left, never below zero (a budget reset below the spend leaves nothing).

        Under a ρ budget ε is NaN (what is left is ``total.rho - rho_spent``), as for the
        in-memory Accountant."""
        def left(db: Db) -> tuple[Fraction | None, Fraction]:
            total = _budget(db, "analyst", self.analyst)
            spent = self._spent(db, "analyst", self.analyst)
            if total.rho is not None:
                return None, as_fraction(total.delta) - spent.zcdp_delta
            return as_fraction(total.epsilon) - spent.epsilon, \
                as_fraction(total.delta) - spent.delta

        eps, delta = self._run(left)
        return Cost(math.nan if eps is None else float(max(eps, Fraction(0))),
                    float(max(delta, Fraction(0))))

    @property
    def basic_remaining(self) -> Cost:
        """``remaining``: the ledger measures what is left by basic composition already."""
        return self.remaining

    @property
    def charges(self) -> tuple[LedgerCharge, ...]:
        """This analyst's committed spends, oldest first."""
        return tuple(self._records(self.analyst))

    def history(self, analyst: str | None = None) -> list[dict[str, Any]]:
        """The audit log: every committed spend (of ``analyst``, or of all), oldest first."""
        return [asdict(record) for record in self._records(analyst)]

    def check(self, epsilon: float, delta: float, events: tuple = (), *,
              dataset: str = "") -> None:
        """Raise BudgetExceededError if (ε, δ) does not fit the analyst's or dataset's budget."""
        cost = _exact("epsilon", epsilon), _exact("delta", delta)
        self._run(lambda db: self._refuse_if_over(db, cost, dataset, events))

    def charge(self, epsilon: float, delta: float, *, query: str, dataset: str = "",
               plan: str | Mapping[str, Any] = "", mechanism: str = "",
               rho: float | None = None, events: tuple = ()) -> LedgerCharge:
        """Check and record a spend in one write transaction; durable once this returns."""
        row, cost = self._charge_row(epsilon, delta, query, dataset, plan, mechanism, rho,
                                     events)
        charge_id = self._run(lambda db: self._insert_charge(db, row, cost, dataset, events),
                              transaction="write")
        return _record((charge_id, *row))

    def _charge_row(self, epsilon: float, delta: float, query: str, dataset: str,
                    plan: str | Mapping[str, Any], mechanism: str, rho: float | None,
                    events: tuple) -> tuple[tuple, tuple[Fraction, Fraction]]:
        """The charges row of a spend, and its exact cost (refused if not a valid one)."""
        cost = _exact("epsilon", epsilon), _exact("delta", delta)
        plan_text = plan if isinstance(plan, str) else json.dumps(plan, sort_keys=True,
                                                                   default=str)
        return (self.analyst, dataset, query, hashlib.sha256(query.encode()).hexdigest(),
                plan_text, mechanism, repr(float(epsilon)), repr(float(delta)),
                None if rho is None else float(rho), time.time(), "spent",
                _events_json(events)), cost

    def _insert_charge(self, db: Db, row: tuple,
                       cost: tuple[Fraction, Fraction], dataset: str, events: tuple) -> int:
        """Lock every scope the spend counts against, refuse it unless it fits, then
        append it; the new charge's id."""
        for scope, name in sorted(_scopes_named(self.analyst, dataset)):
            db.lock(scope, name)
        self._refuse_if_over(db, cost, dataset, events)
        return db.execute(f"INSERT INTO charges ({COLUMNS.removeprefix('id, ')}) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                          row).fetchone()[0]

    def hold(self, key: str, epsilon: float, delta: float, *, dataset: str = "",
             events: tuple = ()) -> bytes | None:
        """Pay for the question ``key`` before its engine reads: the answer stored under it
        (nothing is charged), or None once a hold of its cost is committed.

        A hold counts as spent until ``settle``. One left by a process that is gone is
        taken over at no cost; one of a live process raises QuestionBusy."""
        cost = _exact("epsilon", epsilon), _exact("delta", delta)
        holder = self._store.holder

        def take(db: Db) -> bytes | None:
            for scope, name in sorted(_scopes_named(self.analyst, dataset)):
                db.lock(scope, name)
            answer = db.execute("SELECT result FROM cache WHERE key = ? AND analyst = ?",
                                (key, self.analyst)).fetchone()
            if answer is not None:
                return bytes(answer[0])
            held = db.execute("SELECT holder FROM holds WHERE key = ?", (key,)).fetchone()
            if held is None:
                self._refuse_if_over(db, cost, dataset, events)
                db.execute("INSERT INTO holds (key, holder, analyst, dataset, epsilon, delta, "
                           "events, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (key, holder, self.analyst, dataset, repr(float(epsilon)),
                            repr(float(delta)), _events_json(events), time.time()))
            elif held[0] == holder or not db.alive(held[0]):
                db.execute("UPDATE holds SET holder = ? WHERE key = ?", (holder, key))
            else:
                raise QuestionBusy(key)
            return None

        return self._run(take, transaction="write")

    def settle(self, key: str, epsilon: float, delta: float, *, query: str,
               answer: bytes | None, dataset: str = "", plan: str | Mapping[str, Any] = "",
               mechanism: str = "", rho: float | None = None,
               events: tuple = ()) -> bytes | None:
        """Turn this process's hold on ``key`` into its charge and, with ``answer``, store
        the answer, in one transaction; the answer stored under ``key`` (the first wins).

        Were the hold taken over meanwhile (this process's holder lock lost), the spend is
        checked and charged afresh: a read is never left unpaid."""
        row, cost = self._charge_row(epsilon, delta, query, dataset, plan, mechanism, rho,
                                     events)

        def pay(db: Db) -> bytes | None:
            for scope, name in sorted(_scopes_named(self.analyst, dataset)):
                db.lock(scope, name)
            if db.execute("DELETE FROM holds WHERE key = ? AND holder = ? RETURNING key",
                          (key, self._store.holder)).fetchone() is None:
                self._refuse_if_over(db, cost, dataset, events)
            db.execute(f"INSERT INTO charges ({COLUMNS.removeprefix('id, ')}) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            if answer is None:
                return None
            return self._put(db, key, answer)

        return self._run(pay, transaction="write")

    def cache_get(self, key: str) -> bytes | None:
        """The answer stored under ``key`` for this analyst, or None."""
        row = self._run(lambda db: db.execute(
            "SELECT result FROM cache WHERE key = ? AND analyst = ?",
            (key, self.analyst)).fetchone())
        return None if row is None else bytes(row[0])

    def cache_put(self, key: str, value: bytes) -> bytes:
        """Store an answer that was paid for already (``charge``, before its engine started).

        The first answer stored under a key wins and is returned, so everyone asking one
        key sees one released value. Keys should include the analyst: a key already held
        by another analyst is left alone and ``value`` is returned uncached.
        """
        return self._run(lambda db: self._put(db, key, value), transaction="write")

    def _put(self, db: Db, key: str, value: bytes) -> bytes:
        """Store ``value`` under ``key`` unless an answer is there; the one stored."""
        db.execute("INSERT INTO cache (key, analyst, result, created_at) "
                   "VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                   (key, self.analyst, bytes(value), time.time()))
        row = db.execute("SELECT result FROM cache WHERE key = ? AND analyst = ?",
                         (key, self.analyst)).fetchone()
        return bytes(value) if row is None else bytes(row[0])

    def close(self) -> None:
        with self._lock:
            self._store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Ledger({self.where!r}, analyst={self.analyst!r})"

    def _run(self, body: Callable[[Db], T], transaction: str = "read") -> T:
        """Run ``body`` in a ``"read"`` or ``"write"`` transaction of the store (one at a
        time per Ledger: the running sums are this object's)."""
        with self._lock:
            return self._store.run(body, transaction)

    def _settle(self, db: Db, scope: str, name: str, budget: Budget | None,
                reset: bool) -> None:
        if not isinstance(name, str) or not name:
            raise PrivacyError(f"{scope} name {name!r}: must be a non-empty string")
        db.lock(scope, name)
        stored = _budget(db, scope, name) if _has_budget(db, scope, name) else None
        if budget is None and stored is None:
            raise PrivacyError(f"ledger {self.where!r} holds no budget for {scope} "
                               f"{name!r}: pass budget=Budget(epsilon=..., delta=...)")
        if budget is None or (stored is not None and _same(stored, budget)):
            return
        if stored is not None and not reset:
            raise PrivacyError(
                f"ledger {self.where!r} already holds the budget {stored} for {scope} "
                f"{name!r}, not {budget}: pass the stored budget, or budget=None to use it, "
                "or reset_budget=True to replace it (what was spent stays spent)")
        db.execute("INSERT INTO budgets (scope, name, epsilon, delta, rho, updated_at) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, name) DO UPDATE SET "
                   "epsilon = excluded.epsilon, delta = excluded.delta, rho = excluded.rho, "
                   "updated_at = excluded.updated_at",
                   (scope, name, _text(budget.epsilon), repr(float(budget.delta)),
                    _text(budget.rho), time.time()))

    def _spent(self, db: Db, scope: str, name: str) -> Spent:
        spent = self._sums.get((scope, name), Spent())
        where, params = _scope_filter(scope, name)
        for row in db.execute(f"SELECT id, epsilon, delta, events FROM charges WHERE {where} "
                              "AND id > ? ORDER BY id", (*params, spent.last)):
            spent = spent.plus(*row)
        self._sums[scope, name] = spent
        for row in db.execute(f"SELECT epsilon, delta, events FROM holds WHERE {where}",
                              params):
            spent = spent.plus(spent.last, *row)
        return spent

    def _refuse_if_over(self, db: Db, cost: tuple[Fraction, Fraction],
                        dataset: str, events: tuple = ()) -> None:
        scopes = [("analyst", self.analyst)]
        scopes += [("dataset", name) for name in dataset.split(DATASETS_SEPARATOR)
                   if name and _has_budget(db, "dataset", name)]
        over = []
        for scope, name in scopes:
            total, spent = _budget(db, scope, name), self._spent(db, scope, name)
            if total.rho is not None:
                wanted = zcdp_cost(events, *cost)
                limits = (as_fraction(total.rho), as_fraction(total.delta))
                used = (spent.rho, spent.zcdp_delta)
                labels = ("rho", "delta")
            elif events and self._zcdp_fits(db, scope, name, total, events):
                continue
            else:
                wanted, labels = cost, ("epsilon", "delta")
                limits = (as_fraction(total.epsilon), as_fraction(total.delta))
                used = (spent.epsilon, spent.delta)
            for label, want, limit, had in zip(labels, wanted, limits, used, strict=True):
                if want > limit - had:
                    over.append(f"{label} {float(want):.4g} > remaining "
                                f"{float(max(limit - had, Fraction(0))):.4g} of {scope} "
                                f"{name!r} (total budget {total})"
                                f"{without_delta(total) if label == 'delta' else ''}")
        if over:
            raise BudgetExceededError("query refused, nothing was spent: " + "; ".join(over) +
                                      ". Ask for less epsilon/delta, or for a new budget")

    def _zcdp_fits(self, db: Db, scope: str, name: str, total: Budget,
                   events: tuple) -> bool:
        """The zCDP privacy filter (valid under adaptive choice): its ε at the total δ fits."""
        if total.delta == 0:
            return False
        where, params = _scope_filter(scope, name)
        history = [json.loads(text) for (text,) in db.execute(
            f"SELECT events FROM charges WHERE {where} UNION ALL "
            f"SELECT events FROM holds WHERE {where}", params + params)]
        if any(not entry for entry in history):
            return False  # a charge without events can only be composed by basic composition
        from dpsql.accounting.report import zcdp_epsilon

        composed = [MechanismEvent(**e) for entry in history for e in entry] + list(events)
        spent = zcdp_epsilon(composed, total.delta)
        return spent is not None and spent <= total.epsilon

    def report(self):
        """Spending under every composition method (see :mod:`dpsql.accounting.report`)."""
        from dpsql.accounting.report import build_report

        charges = self.charges
        events = [e for c in charges for e in c.events]
        total = self.total
        return build_report(events, [(c.epsilon, c.delta) for c in charges],
                            math.inf if total.epsilon is None else total.epsilon, total.delta)

    def _records(self, analyst: str | None) -> list[LedgerCharge]:
        where, args = ("", ()) if analyst is None else (" WHERE analyst = ?", (analyst,))
        rows = self._run(lambda db: db.execute(
            f"SELECT {COLUMNS} FROM charges{where} ORDER BY id", args).fetchall())
        return [_record(row) for row in rows]


class QuestionBusy(Exception):
    """A live process holds the question (``Ledger.hold``): wait, then ask again."""


def _events_json(events: tuple) -> str:
    return json.dumps([asdict(e) for e in events])


def stored_budget(path: str | Path, analyst: str) -> Budget | None:
    """The budget a ledger (file or URL) holds for ``analyst``; None when the ledger, or a
    budget for that analyst in it, does not exist. Reads only: nothing is created.

    >>> stored_budget("no-such-ledger.db", "alice") is None
    True
    """
    try:
        store = open_store(path, create=False)
    except NoLedger:
        return None
    try:
        return store.run(lambda db: _budget(db, "analyst", analyst)
                         if _has_budget(db, "analyst", analyst) else None)
    except PrivacyError:  # not a ledger (yet): opening it will say so
        return None
    finally:
        store.close()


def _scopes_named(analyst: str, dataset: str) -> set[tuple[str, str]]:
    """The scopes a charge counts against: its analyst and every dataset it names (with a
    budget or not: one may be set while the charge runs)."""
    return {("analyst", analyst)} | {("dataset", name)
                                     for name in dataset.split(DATASETS_SEPARATOR) if name}


def _has_budget(db: Db, scope: str, name: str) -> bool:
    return db.execute("SELECT 1 FROM budgets WHERE scope = ? AND name = ?",
                      (scope, name)).fetchone() is not None


def _scope_filter(scope: str, name: str) -> tuple[str, tuple[str, ...]]:
    """SQL condition (and parameters) selecting the charges that count against a scope."""
    if scope == "analyst":
        return "analyst = ?", (name,)
    return ("(dataset = ? OR '+' || dataset || '+' LIKE ? ESCAPE '\\')",
            (name, f"%+{_escape_like(name)}+%"))


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _budget(db: Db, scope: str, name: str) -> Budget:
    row = db.execute("SELECT epsilon, delta, rho FROM budgets WHERE scope = ? AND name = ?",
                     (scope, name)).fetchone()
    if row is None:
        raise PrivacyError(f"the ledger holds no budget for {scope} {name!r}")
    epsilon, delta, rho = row
    return Budget(epsilon=None if epsilon is None else float(epsilon), delta=float(delta),
                  rho=None if rho is None else float(rho))


def _text(value: float | None) -> str | None:
    return None if value is None else repr(float(value))


def _same(a: Budget, b: Budget) -> bool:
    def exact(budget: Budget) -> tuple[Fraction | None, ...]:
        return tuple(None if v is None else as_fraction(v)
                     for v in (budget.epsilon, budget.delta, budget.rho))

    return exact(a) == exact(b)


@dataclass(frozen=True)
class Spent:
    """The running sums of a scope's charges up to charge id ``last``: basic (ε, δ) as
    charged, and (ρ, δ) of the charges as approximate zCDP (:func:`zcdp_cost`)."""

    last: int = 0
    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    rho: Fraction = Fraction(0)
    zcdp_delta: Fraction = Fraction(0)

    def plus(self, charge_id: int, epsilon: str, delta: str, events: str) -> Spent:
        rho, zcdp_delta = zcdp_cost([MechanismEvent(**e) for e in json.loads(events)],
                                    Fraction(epsilon), Fraction(delta))
        return Spent(charge_id, self.epsilon + Fraction(epsilon), self.delta + Fraction(delta),
                     self.rho + rho, self.zcdp_delta + zcdp_delta)


def zcdp_cost(events: Sequence[MechanismEvent] | tuple, epsilon: Fraction,
              delta: Fraction) -> tuple[Fraction, Fraction]:
    """A charge as δ-approximate ρ-zCDP, exactly and never below the truth: (ρ, δ).

    Pure ε-DP steps cost ε²/2 (Bun & Steinke 2016, Prop. 1.4), a Gaussian with noise
    multiplier m 1/(2m²) (Prop. 1.6; the discrete one too, Canonne, Kamath & Steinke 2020,
    Thm 14), an (ε, δ) step ε²/2 and δ (§8: approximate zCDP). A charge without recorded
    mechanisms is one (ε, δ) step of its charged cost.

    >>> from dpsql.accounting.composition import approx, laplace
    >>> zcdp_cost([laplace(0.5), approx(0.0, 1e-7)], Fraction(1, 2), Fraction(1, 10**7))
    (Fraction(1, 8), Fraction(1, 10000000))
    >>> zcdp_cost([], Fraction(1), Fraction(1, 10**6))
    (Fraction(1, 2), Fraction(1, 1000000))
    """
    if not events:
        return epsilon * epsilon / 2, delta
    rho, approximate = Fraction(0), Fraction(0)
    for event in events:
        if event.kind == "gaussian":
            multiplier = Fraction(math.nextafter(event.noise_multiplier, 0.0))
            rho += 1 / (2 * multiplier * multiplier)
        else:
            rho += as_fraction(event.epsilon) ** 2 / 2
            approximate += as_fraction(event.delta)
    return rho, approximate


def _exact(name: str, value: float) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not math.isfinite(value) or value < 0:
        raise PrivacyError(f"{name}={value!r}: a charge must be a finite number >= 0")
    return as_fraction(value)


def _record(row: tuple) -> LedgerCharge:
    charge_id, analyst, dataset, query, digest, plan, mechanism, eps, delta, *rest = row
    return LedgerCharge(charge_id, analyst, dataset, query, digest, plan, mechanism,
                        float(eps), float(delta), *rest)
