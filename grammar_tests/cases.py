"""The corpus's cases, read from grammar_tests/*.sql, and the helpers that check them.

A case, in the style of sqlglot's fixtures::

    # title: COUNT(*) over the whole table
    # epsilon: 0.5                       (optional, default 1)
    # delta: 0                           (optional, default 1e-6)
    # dialect: bigquery                  (optional, default duckdb)
    SELECT COUNT(*) FROM visits;
    # plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

An accepted case may give ``# result:``, its exact answer with noise off on the test
catalog (``bounded_rows``: every group kept, floats to 6 significant digits), and
``# bounding:``, the strategy of its bounded query on DuckDB with its options (``bounding``;
``dpsql.rewrite.choose`` says why), and ends
with ``# plan:``, a one-line summary of ``explain().to_dict()``
(see ``summarize``), and is also run once. The summary reads: noise kind; released
statistics one unit can change; the effective contribution limits; partition selection
(``public`` or its method); then per output column its name, or ``name=AGGREGATE
in [lo, hi] L1=.. L2=..``; and ``also ..`` for aggregates used only inside expressions,
HAVING or ORDER BY. A refused case ends with ``# error: ClassName`` or
``# error: ClassName: substring of the message``; it must spend no budget.
``# note:`` lines are comments. ε and δ not given by the case are left to the query's
``WITH DIFFERENTIAL_PRIVACY OPTIONS``, else to the connection's defaults (1 and 1e-6).
The catalog the cases run against is built by ``grammar_tests/catalog.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
from sqlglot import exp

import dpsql
from dpsql.compile import CompiledQuery
from dpsql.composed import Composed
from dpsql.evaluate import truth

HERE = Path(__file__).parent


DOCS = HERE.parent / "docs" / "sql.md"


KEYS = ("title", "epsilon", "delta", "dialect", "note", "result", "bounding", "plan", "error")


@dataclass
class Case:
    title: str = ""
    sql: str = ""
    epsilon: float | None = None
    delta: float | None = None
    dialect: str = "duckdb"
    expect: dict[str, str] = field(default_factory=dict)


def read_cases(path: Path) -> list[Case]:
    """Parse one case file; a case closes at its ``# plan:`` or ``# error:`` line."""
    cases, case = [], Case()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            key, value = key.strip(), value.strip()
            where = f"{path.name}:{number}"
            assert key in KEYS and value, f"{where}: expected '# <{'|'.join(KEYS)}>: <value>'"
            if key in ("result", "bounding"):
                case.expect[key] = value
            elif key in ("plan", "error"):
                assert case.title and case.sql, f"{where}: {key} without a title and SQL"
                case.expect[key] = value
                case.sql = case.sql.removesuffix(";")
                cases.append(case)
                case = Case()
            elif key in ("epsilon", "delta"):
                setattr(case, key, float(value))
            elif key in ("title", "dialect"):
                setattr(case, key, value)
        elif line.strip():
            case.sql = f"{case.sql}\n{line}".strip()
    assert not case.sql, f"{path.name}: the last case has no '# plan:' or '# error:' line"
    return cases


def normalise(sql: str) -> str:
    return " ".join(sql.split()).rstrip(";").strip()


CASES = [c for path in sorted(HERE.glob("*.sql")) for c in read_cases(path)]


ACCEPTED = [c for c in CASES if "plan" in c.expect]


REFUSED = [c for c in CASES if "error" in c.expect]


WITH_RESULT = [c for c in ACCEPTED if "result" in c.expect]


def _number(x: float) -> str:
    return f"{x + 0.0:.6g}"  # + 0.0 turns -0.0 into 0


def summarize(info: dict) -> str:
    """One deterministic line: noise, limits, selection, then each output column. With
    grouping sets: ``sets=k stats/unit=n`` (``sets=k summed from (a, b)`` when only the finest
    set is measured), then each measured set's own line after ``||``; with several
    releases, ``parts=k stats/unit=n`` and each part's line after ``||``."""
    if "parts" in info:
        return " || ".join([f"parts={len(info['parts'])} stats/unit={info['statistics_per_unit']}",
                            *(f"{part['part']} {summarize(part)}" for part in info["parts"])])
    if "grouping_sets" in info:
        summed = f" summed from {info['summed_from']}" if "summed_from" in info else ""
        sets = info["consistent_totals"] if summed else info["grouping_sets"]
        return " || ".join([f"sets={len(sets)}{summed} "
                            f"stats/unit={info['statistics_per_unit']}",
                            *(f"{part['set']} {summarize(part)}"
                              for part in info["grouping_sets"])])
    limits, selection = info["contribution_bounds"], info["partition_selection"]
    head = [info["mechanism"]["kind"], f"stats/unit={info['statistics_per_unit']}",
            f"groups/unit={limits['max_groups_per_unit']}",
            f"rows/group={limits['max_rows_per_group']}"]
    if limits["max_rows_per_unit"] is not None:
        head.append(f"rows/unit={limits['max_rows_per_unit']}")
    head.append(f"selection={selection if selection == 'public' else selection['method']}")
    if selection != "public" and "min_units" in selection:
        head.append(f"min_units={selection['min_units']}")
    parts, shown = [" ".join(head)], set()
    for col in info["columns"]:
        agg = col["aggregate"]
        if agg is None:
            parts.append(col["name"])
            continue
        shown.add(agg)
        text = agg if col["name"] == agg else f"{col['name']}={agg}"
        if col.get("bounds"):
            text += f" in [{_number(col['bounds'][0])}, {_number(col['bounds'][1])}]"
        parts.append(f"{text} L1={_number(col['l1_sensitivity'])} "
                     f"L2={_number(col['l2_sensitivity'])}")
    hidden = [a["sql"] for a in info["aggregates"] if a["sql"] not in shown]
    if hidden:
        parts.append("also " + ", ".join(hidden))
    return " | ".join(parts)


def bounded_rows(con: dpsql.Connection, case: Case) -> str:
    """The query's answer with noise off: the bounded aggregates (groups per unit chosen
    with the salt of seed 0, every group kept), post-processed like a release."""
    compiled = compile_case(con, case)
    rows = truth(con, compiled, seed=0).fetchall()
    if compiled.plan.output.args.get("order") is None:
        rows = sorted(rows, key=repr)
    return repr([tuple(float(_number(v)) if isinstance(v, float) else v for v in row)
                 for row in rows])


def bounding(compiled: CompiledQuery | Composed) -> str:
    """The strategy of a compiled query and its options, as a ``# bounding:`` line reads
    (with grouping sets or several releases, each part's, separated by ``||``)."""
    if isinstance(compiled, Composed):
        return " || ".join(bounding(part) for part in compiled.parts)
    options = compiled.bounding.options
    return compiled.bounding.strategy + (f" ({', '.join(options)})" if options else "")


def generated_name_clashes(sql: str) -> list[str]:
    """Names the bounded query defines twice in one scope: SELECT outputs, CTEs, FROM aliases.

    Every name dpsql generates is in its reserved namespace (``dpsql.names``), which no query
    or catalog may use; this checks that the generators never reuse one in one scope either.
    """
    tree = sqlglot.parse_one(sql, read="duckdb")
    clashes = []
    for select in tree.find_all(exp.Select):
        outputs = [e.alias_or_name for e in select.expressions if not isinstance(e, exp.Star)]
        sources = [s.alias_or_name for s in [select.args.get("from_"),
                                             *(select.args.get("joins") or [])]
                   if s is not None for s in [s.this]]
        for names in (outputs, sources):
            clashes += sorted({n for n in names if names.count(n) > 1})
    for with_ in tree.find_all(exp.With):
        names = [cte.alias for cte in with_.expressions]
        clashes += sorted({n for n in names if names.count(n) > 1})
    return clashes


def compile_case(con: dpsql.Connection, case: Case) -> CompiledQuery | Composed:
    """The case compiled on ``con`` with its ε, δ and dialect."""
    return con.compile(case.sql, epsilon=case.epsilon, delta=case.delta, dialect=case.dialect)
