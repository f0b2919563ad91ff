"""Tables for RBAC, network policy, ingress and controller revisions, plus the apiserver's default
table (NAME, CREATED AT) used for kinds without a dedicated printer."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .common import (AGE, AGE_DOC, NAME, Column, Obj, Printer, age, as_dict, as_int, as_list, col, created_at,
                     dig, format_selector, meta, name, wide)


def _subjects(obj: Obj) -> tuple[str, str, str]:
    users, groups, sas = [], [], []
    for s in as_list(obj.get("subjects")):
        if not isinstance(s, dict):
            continue
        kind = s.get("kind")
        if kind == "ServiceAccount":
            sas.append(f"{s.get('namespace', '')}/{s.get('name', '')}")
        elif kind == "User":
            users.append(str(s.get("name", "")))
        elif kind == "Group":
            groups.append(str(s.get("name", "")))
    return ", ".join(users), ", ".join(groups), ", ".join(sas)


def _binding(obj: Obj, now: datetime) -> list[Any]:
    ref = as_dict(obj.get("roleRef"))
    return [name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", age(obj, now), *_subjects(obj)]


def _binding_columns(what: str) -> tuple[Column, ...]:
    return (
        NAME,
        col("Role", "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
                    "namespace."),
        AGE,
        wide("Users", f"Users in the {what}"),
        wide("Groups", f"Groups in the {what}"),
        wide("ServiceAccounts", f"ServiceAccounts in the {what}"),
    )


ROLEBINDING = Printer(_binding_columns("roleBinding"), _binding)
CLUSTERROLEBINDING = Printer(_binding_columns("clusterRoleBinding"), _binding)

NETWORKPOLICY = Printer((
    NAME,
    col("Pod-Selector", "Selects the pods to which this NetworkPolicy object applies."),
    AGE,
), lambda np, now: [name(np), format_selector(dig(np, "spec", "podSelector", default={})), age(np, now)])


def _ingress_hosts(ing: Obj) -> str:
    rules = [r for r in as_list(dig(ing, "spec", "rules")) if isinstance(r, dict)]
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        if not more and rule.get("host"):
            hosts.append(str(rule["host"]))
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if more else text


def _ingress(ing: Obj, now: datetime) -> list[Any]:
    lb = sorted({str(i.get("ip") or i.get("hostname")) for i in as_list(dig(ing, "status", "loadBalancer", "ingress"))
                 if isinstance(i, dict) and (i.get("ip") or i.get("hostname"))})
    ports = "80, 443" if as_list(dig(ing, "spec", "tls")) else "80"
    return [name(ing), str(dig(ing, "spec", "ingressClassName", default="<none>")), _ingress_hosts(ing),
            ",".join(lb), ports, age(ing, now)]


INGRESS = Printer((
    NAME,
    col("Class", "The name of the IngressClass resource that should be used for additional configuration"),
    col("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
    col("Address", "Address is a list containing ingress points for the load-balancer"),
    col("Ports", "Ports of TLS configurations that open"),
    AGE,
), _ingress)


def _controller_revision(obj: Obj, now: datetime) -> list[Any]:
    owner = "<none>"
    for ref in as_list(meta(obj).get("ownerReferences")):
        if isinstance(ref, dict) and ref.get("controller"):
            group = str(ref.get("apiVersion", "")).rpartition("/")[0]
            kind = str(ref.get("kind", "")).lower()
            owner = f"{kind}.{group}/{ref.get('name', '')}" if group else f"{kind}/{ref.get('name', '')}"
    return [name(obj), owner, as_int(obj.get("revision")), age(obj, now)]


CONTROLLERREVISION = Printer((
    NAME, col("Controller", "Controller of the object"),
    col("Revision", "Revision indicates the revision of the state represented by Data."), AGE,
), _controller_revision)

# The apiserver's DefaultTableConvertor (roles, clusterroles, limitranges, ...).
CREATED_AT = Printer((NAME, Column("Created At", "date", "", AGE_DOC)), lambda obj, now: [name(obj), created_at(obj)])

# Kinds the apiserver never printed: name and age.
GENERIC = Printer((NAME, AGE), lambda obj, now: [name(obj), age(obj, now)])
