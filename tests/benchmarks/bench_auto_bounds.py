"""AVG(income) on PUMS_dup, bounds="auto" (and optionally max_rows_per_unit="auto") at eps=1."""
import sys, warnings, numpy as np, dpsql, duckdb
from dpsql.datasets import pums_path
warnings.simplefilter("ignore")
p = pums_path('PUMS_dup')
truth = duckdb.sql(f"select avg(income) from '{p}'").fetchall()[0][0]
trials, limit = int(sys.argv[1]), (None if sys.argv[2] == "none" else sys.argv[2] if sys.argv[2] == "auto" else int(sys.argv[2]))
errs, his, ms = [], [], []
for seed in range(trials):
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-3), seed=seed, cache=False)
    con.register("pums", str(p), privacy_unit="pid", bounds={"income": "auto"}, max_rows_per_unit=limit)
    (v,), = con.sql("SELECT AVG(income) FROM pums", epsilon=1.0, delta=1e-6).fetchall()
    info = con.catalog.get("pums")
    errs.append(abs(v - truth) / truth); his.append(info.bounds["income"][1]); ms.append(info.max_rows_per_unit)
    con.close()
v, c = np.unique(np.log2(his).round().astype(int), return_counts=True)
print(f"rows limit {sys.argv[2]}: median rel err {np.median(errs):.3f}, RMSE/truth {np.sqrt(np.mean(np.square(errs))):.3f}, hi 2^k: {dict(zip(v.tolist(), c.tolist()))}, limits {sorted(set(ms), key=str)}")
