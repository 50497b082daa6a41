# note: ZetaSQL's reports (docs/sql.md, "Reports: report_format"): the aggregate released as
# note: its value, its 95 % interval and its clamp bounds, as JSON text or as a STRUCT with
# note: the fields of ZetaSQL's protocol buffer; built after the noise, so free.

# title: a JSON report of a SUM
# dialect: bigquery
SELECT SUM(cost, report_format => 'JSON') AS r FROM visits;
# result: [('{"result":{"value":220271.39933300018,"noise_confidence_interval":{"lower_bound":196305.52823925018,"upper_bound":244237.27042675018,"confidence_level":0.95}},"bounding_report":{"lower_bound":0.0,"upper_bound":2000.0}}',)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | r | also SUM(cost, report_format => 'JSON')

# title: a PROTO report of a grouped COUNT
# dialect: bigquery
SELECT region, COUNT(*, report_format => 'PROTO') AS r FROM visits GROUP BY region;
# result: [('east north central', {'value': {'int_value': 171, 'noise_confidence_interval': {'lower_bound': 135.0, 'upper_bound': 207.0, 'confidence_level': 0.95}}}), ('mid atlantic', {'value': {'int_value': 133, 'noise_confidence_interval': {'lower_bound': 97.0, 'upper_bound': 169.0, 'confidence_level': 0.95}}}), ('mountain', {'value': {'int_value': 101, 'noise_confidence_interval': {'lower_bound': 65.0, 'upper_bound': 137.0, 'confidence_level': 0.95}}}), ('new england', {'value': {'int_value': 68, 'noise_confidence_interval': {'lower_bound': 32.0, 'upper_bound': 104.0, 'confidence_level': 0.95}}}), ('pacific', {'value': {'int_value': 265, 'noise_confidence_interval': {'lower_bound': 229.0, 'upper_bound': 301.0, 'confidence_level': 0.95}}}), ('south atlantic', {'value': {'int_value': 158, 'noise_confidence_interval': {'lower_bound': 122.0, 'upper_bound': 194.0, 'confidence_level': 0.95}}}), ('west north central', {'value': {'int_value': 89, 'noise_confidence_interval': {'lower_bound': 53.0, 'upper_bound': 125.0, 'confidence_level': 0.95}}}), ('west south central', {'value': {'int_value': 71, 'noise_confidence_interval': {'lower_bound': 35.0, 'upper_bound': 107.0, 'confidence_level': 0.95}}})]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | r | also COUNT(*, report_format => 'PROTO')

# title: a field of a JSON report of an AVG
# dialect: bigquery
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 0) AVG(age, contribution_bounds_per_group => (0, 100), report_format => 'JSON').result.value AS m FROM visits;
# result: [('48.57281553398058',)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | m | also AVG(age, contribution_bounds_per_group => (0, 100), report_format => 'JSON')

# title: ZetaSQL's older WITH REPORT(FORMAT = ...)
# dialect: bigquery
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 0) ANON_SUM(age CLAMPED BETWEEN 0 AND 100 WITH REPORT(FORMAT = PROTO)).bounding_report AS b FROM visits;
# result: [({'lower_bound': {'float_value': 0.0}, 'upper_bound': {'float_value': 100.0}},)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | b | also ANON_SUM(age CLAMPED BETWEEN 0 AND 100 WITH REPORT(FORMAT = PROTO))

# title: an unknown report format is refused
# dialect: bigquery
SELECT COUNT(*, report_format => 'XML') FROM visits;
# error: UnsupportedQueryError: allowed: 'JSON' or 'PROTO'

# title: an unknown report field is refused
# dialect: bigquery
SELECT SUM(cost, report_format => 'JSON').result.noise FROM visits;
# error: UnsupportedQueryError: no field 'noise' there

# title: arithmetic on a report is refused
# dialect: bigquery
SELECT COUNT(*, report_format => 'JSON') + 1 FROM visits;
# error: UnsupportedQueryError: a report as a SELECT item of its own
