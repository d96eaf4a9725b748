"""Percentiles and byte-size formatting shared by the sweep driver and the FCT analysis."""

import math


class InputProblem(Exception):
    """Bad input: which file, which field, what was expected, what was found (exit code 2)."""

    def __init__(self, file, field, expected, found):
        self.file, self.field, self.expected, self.found = file, field, expected, found
        where = "%s: field '%s'" % (file, field) if field else str(file)
        super().__init__("%s: expected %s, found %s" % (where, expected, found))


def percentile(values, q):
    """Nearest-rank percentile: the ceil(q n)-th smallest value (the simulator's definition).

    Returns None for an empty list.
    """
    if not values:
        return None
    v = sorted(values)
    rank = max(1, math.ceil(q * len(v)))
    return v[min(rank, len(v)) - 1]


_UNITS = {"": 1, "B": 1, "K": 10**3, "KB": 10**3, "M": 10**6, "MB": 10**6, "G": 10**9, "GB": 10**9,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


def parse_bytes(text, file="<command line>", field="bytes"):
    """'30K' -> 30000, '1MiB' -> 1048576, '500000' -> 500000 (K, M, G are decimal)."""
    t = text.strip()
    num = t.rstrip("BbKkMmGgIi")
    unit = t[len(num):].upper()
    try:
        value = float(num)
    except ValueError:
        raise InputProblem(file, field, 'a byte count like 30000, "30K" or "1MiB"', '"%s"' % text)
    if unit not in _UNITS or value < 0:
        raise InputProblem(file, field, 'a byte count like 30000, "30K" or "1MiB"', '"%s"' % text)
    return int(round(value * _UNITS[unit]))


def format_bytes(n):
    """Short decimal size for labels: 999 -> '999', 30000 -> '30K', 16234 -> '16.2K'."""
    if n is None:
        return "inf"
    for unit, scale in (("G", 10**9), ("M", 10**6), ("K", 10**3)):
        if n >= scale:
            v = n / scale
            digits = 0 if v >= 100 else 1 if v >= 10 else 2  # three significant digits
            text = "%.*f" % (digits, v)
            return (text.rstrip("0").rstrip(".") if "." in text else text) + unit
    return str(int(n))
