"""Final answers read leniently: structured JSON when present, free text always kept."""

from ontrial.agents.answer import json_objects, output_from_result, parse_answer
from ontrial.agents.prompt import task_prompt
from ontrial.agents.protocol import Budgets


def test_fenced_json_gives_structured_fields_and_keeps_the_text() -> None:
    text = ('The fares pods are OOMKilled.\n```json\n{"root_cause": "memory-limit-too-low", "service": "fares", '
            '"mitigation_applied": "yes", "evidence": "exit 137"}\n```')
    out = parse_answer(text)
    d = out.diagnosis
    assert d.root_cause == ["memory-limit-too-low"] and d.causal_service == "fares" and d.mitigation_applied
    assert d.evidence == ["exit 137"] and d.summary == "The fares pods are OOMKilled."
    assert out.text == text


def test_embedded_object_last_one_wins_and_wrapped_diagnosis() -> None:
    text = 'first {"root_cause": ["a"]} then {"diagnosis": {"root_cause": ["b", "c"]}, "usage": {"tokens": 9}}'
    out = parse_answer(text)
    assert out.diagnosis.root_cause == ["b", "c"] and out.usage.tokens == 9


def test_free_text_only_is_kept_as_the_summary() -> None:
    out = parse_answer("  The ConfigMap timetable-settings was deleted.  ")
    assert out.diagnosis.root_cause == [] and out.diagnosis.summary == "The ConfigMap timetable-settings was deleted."
    assert parse_answer("").diagnosis is None
    assert parse_answer("{not json} and {\"unrelated\": 1}").diagnosis.summary.startswith("{not json}")


def test_result_objects() -> None:
    out = output_from_result({"text": "rolled back", "diagnosis": {"root_cause": "bad-image-tag"},
                              "usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.01}})
    assert out.diagnosis.root_cause == ["bad-image-tag"] and out.diagnosis.summary == "rolled back"
    assert (out.usage.tokens, out.usage.cost_usd) == (15, 0.01)
    assert output_from_result("plain words").diagnosis.summary == "plain words"
    assert output_from_result({"answer": '{"root_cause": ["x"]}'}).diagnosis.root_cause == ["x"]
    assert output_from_result(None).diagnosis is None
    assert json_objects('```\n{"a": 1}\n```') == [{"a": 1}]


def test_prompt_has_the_alert_budgets_and_answer_format_but_no_task_identity() -> None:
    alert = {"name": "KubePodCrashLooping", "labels": {"deployment": "fares"}}
    text = task_prompt(alert, "ot-1234567890", Budgets(steps=30, tokens=1000, wall_seconds=300), "use MCP")
    assert "KubePodCrashLooping" in text and "30 tool calls" in text and "300 seconds" in text
    assert "use MCP" in text and '"root_cause"' in text
