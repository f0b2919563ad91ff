"""Name and label syntax checks with the API server's exact wording.

Each check returns a list of messages (empty when valid), so callers can attach them to a field path
(validation) or wrap them in a parse error (selectors) the way apimachinery does.
"""

from __future__ import annotations

import re

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
ENV_VAR_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"

_DNS1123_LABEL = re.compile(f"^{DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN = re.compile(f"^{DNS1123_SUBDOMAIN_FMT}$")
_DNS1035_LABEL = re.compile(f"^{DNS1035_LABEL_FMT}$")
_QUALIFIED_NAME = re.compile(f"^{QUALIFIED_NAME_FMT}$")
_LABEL_VALUE = re.compile(f"^{LABEL_VALUE_FMT}$")
_CONFIG_KEY = re.compile(f"^{CONFIG_KEY_FMT}$")
_ENV_VAR = re.compile(f"^{ENV_VAR_FMT}$")
_IANA_SVC = re.compile("^[-a-z0-9]+$")


def _too_long(n: int) -> str:
    return f"must be no more than {n} characters"


def dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_too_long(63))
    if not _DNS1123_LABEL.match(value):
        errs.append("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                    f"regex used for validation is '{DNS1123_LABEL_FMT}')")
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(_too_long(253))
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                    "and must start and end with an alphanumeric character (e.g. 'example.com', "
                    f"regex used for validation is '{DNS1123_SUBDOMAIN_FMT}')")
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_too_long(63))
    if not _DNS1035_LABEL.match(value):
        errs.append("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
                    f"regex used for validation is '{DNS1035_LABEL_FMT}')")
    return errs


def path_segment_name(value: str) -> list[str]:
    """Names of objects that only need to be usable in a URL path (RBAC objects)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    for bad in ("/", "%"):
        if bad in value:
            return [f"may not contain '{bad}'"]
    return []


def qualified_name(value: str) -> list[str]:
    """Label and annotation keys: optional DNS subdomain prefix, '/', then a name part."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        prefix_errs: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        prefix_errs = ["prefix part " + e for e in dns1123_subdomain(prefix)]
    else:
        return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                f"validation is '{QUALIFIED_NAME_FMT}') with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    errs = list(prefix_errs)
    if not name:
        errs.append("name part must be non-empty")
    else:
        if len(name) > 63:
            errs.append("name part " + _too_long(63))
        if not _QUALIFIED_NAME.match(name):
            errs.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                        f"used for validation is '{QUALIFIED_NAME_FMT}')")
    return errs


def label_value(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(_too_long(63))
    if not _LABEL_VALUE.match(value):
        errs.append("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
                    f"or '12345', regex used for validation is '{LABEL_VALUE_FMT}')")
    return errs


def config_key(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(_too_long(253))
    if not _CONFIG_KEY.match(value):
        errs.append("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                    f"or 'KEY_NAME',  or 'key-name', regex used for validation is '{CONFIG_KEY_FMT}')")
    elif value in (".", ".."):
        errs.append(f"must not be '{value}'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def env_var_name(value: str) -> list[str]:
    if _ENV_VAR.match(value):
        return []
    return ["a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
            f"and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used "
            f"for validation is '{ENV_VAR_FMT}')"]


def port_name(value: str) -> list[str]:
    """IANA_SVC_NAME: named container/service ports."""
    errs = []
    if len(value) > 15:
        errs.append(_too_long(15))
    if not _IANA_SVC.match(value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if not any(c.isalpha() for c in value):
        errs.append("must contain at least one letter or number (a-z)")
    if value.startswith("-") or value.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs
