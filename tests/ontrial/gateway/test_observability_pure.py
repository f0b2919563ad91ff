"""Prometheus answers rendered for agents."""

from ontrial.gateway.observability import render_result


def test_vectors_matrices_and_scalars() -> None:
    vector = {"resultType": "vector", "result": [
        {"metric": {"__name__": "up", "service": "b"}, "value": [1700000000, "1"]},
        {"metric": {"service": "a", "code": "500"}, "value": [1700000000, "0.123456789"]}]}
    assert render_result(vector).splitlines() == ['up{service="b"} => 1', '{code="500", service="a"} => 0.123457']
    matrix = {"resultType": "matrix", "result": [
        {"metric": {"__name__": "x"}, "values": [[i, str(i)] for i in range(100)]}]}
    line = render_result(matrix)
    assert line.startswith("x{} => [0 1 2 3 4 ... 76") and line.endswith("99] (100 points, oldest first)")
    assert render_result({"resultType": "scalar", "result": [1, "2.5"]}) == "scalar: 2.5"
    assert render_result({"resultType": "vector", "result": []}) == "(empty vector: no series matched)"
