"""JUnit XML for CI systems: one test case per task; a failure carries the reason and the flip."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from .record import RunRecord


def to_junit(rec: RunRecord) -> str:
    r = rec.report
    flips = {f.task_id: f for f in (rec.gate.regressions if rec.gate else [])}
    by_task: dict[str, list] = {}
    for t in rec.trials:
        by_task.setdefault(t.task_id, []).append(t)
    suite = ET.Element("testsuite", name=f"ontrial.{rec.suite_name}", tests=str(len(r.tasks)))
    failures = errors = 0
    for t in r.tasks:
        case = ET.SubElement(suite, "testcase", classname=f"ontrial.{rec.suite_name}", name=t.task_id)
        trials = sorted(by_task.get(t.task_id, []), key=lambda x: x.trial_index)
        bad = [x for x in trials if not x.outcome.passed and x.outcome.counts]
        if t.n == 0:
            errors += 1
            reasons = "; ".join(x.outcome.reason for x in trials) or "no trial finished"
            ET.SubElement(case, "error", message="no trial counted (infra errors)").text = reasons
        elif bad:
            failures += 1
            flip = flips.get(t.task_id)
            msg = f"{len(bad)}/{t.n} trials failed" + (" (regression: pass → fail)" if flip else "")
            detail = "\n".join(f"trial {x.trial_index}: {x.outcome.outcome.value}: {x.outcome.reason}" for x in bad)
            ET.SubElement(case, "failure", message=msg, type=bad[0].outcome.outcome.value).text = detail
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
