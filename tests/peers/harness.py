"""Run peers' own DP SQL test queries through dpsql and count what it answers.

Each query gets one of four outcomes: ``answered`` (a noisy result), ``refused`` (a
``dpsql.Error`` before any data is read: the query is not one dpsql can prove private, or
its SQL is not supported), ``crashed`` (any other exception: a dpsql bug), and the peer's
own verdict (it answers or refuses the query) beside it. Run against checkouts (or the
bare git directories ``fetch`` makes) of the peers::

    python -m tests.peers.harness --smartnoise ../smartnoise-sdk --zetasql ../zetasql \\
        --pyqrlew ../pyqrlew [--list refused]

and it prints, per peer, the share of the queries the peer answers that dpsql answers too,
then (``--list``) each query of one outcome with dpsql's error. docs/sql.md keeps the
figures with the peers' commits.
"""

from __future__ import annotations

import argparse
import collections
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import dpsql
from tests.peers.suites import PEERS, Peer, Query, Repository

BUDGET = dpsql.Budget(epsilon=1e9, delta=0.5)
"""Room for every query of a suite: the harness measures the SQL, not the accounting."""


@dataclass(frozen=True)
class Outcome:
    query: Query
    verdict: str  # answered, refused or crashed
    detail: str = ""


def run_peer(peer: Peer, repo: Repository) -> list[Outcome]:
    """Every query of ``peer`` on its translated tables, at ε = 1 and δ = 1e-6 unless the
    query sets its own (the DP clause of ZetaSQL's syntax)."""
    outcomes = []
    with warnings.catch_warnings(), dpsql.connect(
            budget=BUDGET, dialect=peer.dialect, default_delta=1e-6, cache=False) as con:
        warnings.simplefilter("ignore", dpsql.PrivacyWarning)  # bounds estimated: expected
        peer.tables(repo, con)
        for query in peer.queries(repo):
            outcomes.append(_outcome(con, query, peer.translate(query.sql)))
    return outcomes


def _outcome(con: dpsql.Connection, query: Query, sql: str) -> Outcome:
    try:
        con.sql(sql).fetchall()
    except dpsql.Error as error:
        return Outcome(query, "refused", f"{type(error).__name__}: {error}")
    except Exception as error:  # a crash is what the harness is here to find
        return Outcome(query, "crashed", f"{type(error).__name__}: {error}")
    return Outcome(query, "answered")


def tally(outcomes: Iterable[Outcome]) -> dict[tuple[bool, str], int]:
    """Counts by (the peer answers, dpsql's verdict)."""
    return collections.Counter((o.query.peer_answers, o.verdict) for o in outcomes)


def summary(name: str, commit: str, outcomes: list[Outcome]) -> str:
    counts = tally(outcomes)
    answers = sum(n for (peer, _), n in counts.items() if peer)
    refuses = sum(n for (peer, _), n in counts.items() if not peer)
    share = counts[True, "answered"] / answers if answers else float("nan")
    return (f"{name} @ {commit[:12]}: {len(outcomes)} queries. Of the {answers} the peer "
            f"answers, dpsql answers {counts[True, 'answered']} ({share:.0%}), refuses "
            f"{counts[True, 'refused']}, crashes on {counts[True, 'crashed']}. Of the "
            f"{refuses} the peer refuses, dpsql refuses {counts[False, 'refused']}, answers "
            f"{counts[False, 'answered']}, crashes on {counts[False, 'crashed']}.")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for key in PEERS:
        parser.add_argument(f"--{key}", metavar="REPO", help=f"a checkout of {PEERS[key].name}")
    parser.add_argument("--list", choices=("answered", "refused", "crashed"),
                        help="also list the queries with this outcome")
    args = parser.parse_args(argv)
    for key, peer in PEERS.items():
        if getattr(args, key) is None:
            continue
        repo = Repository(getattr(args, key))
        outcomes = run_peer(peer, repo)
        print(summary(peer.name, repo.commit(), outcomes))
        for o in outcomes:
            if o.verdict == args.list:
                peer_says = "peer answers" if o.query.peer_answers else "peer refuses"
                print(f"  [{peer_says}] {o.query.source}: {' '.join(o.query.sql.split())}"
                      f"\n      {o.detail[:300]}")


if __name__ == "__main__":
    main()
