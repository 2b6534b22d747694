"""The HL7 TS parser: normalised as the FHIR reader's dates are, or None; never an error."""

import re
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.cda_xml import parse_ts, ts_datetime
from ingest.keys import normalize_date

NORMALISED = re.compile(r"\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}:\d{2}Z?)?)?)?")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("20130815103000-0500", "2013-08-15T15:30:00Z"),
        ("201208151450-0800", "2012-08-15T22:50:00Z"),
        ("20140531151542.706-0700", "2014-05-31T22:15:42Z"),
        ("20121231230000-0200", "2013-01-01T01:00:00Z"),
        ("20120801070000", "2012-08-01T07:00:00"),  # no zone: local time, no Z
        ("20130121000000", "2013-01-21"),  # zero time without zone pads a date
        ("20130121000000+0000", "2013-01-21T00:00:00Z"),
        ("19980501", "1998-05-01"),
        ("201208", "2012-08"),
        ("2012", "2012"),
        (" 20120815 ", "2012-08-15"),
        ("000000", None),
        ("0", None),
        ("00010101000000", None),
        ("20130230", None),
        ("2013013", None),
        ("20130815250000", None),
        ("", None),
        (None, None),
    ],
)
def test_examples(value: str | None, expected: str | None) -> None:
    assert parse_ts(value) == expected


offsets = st.integers(min_value=-14 * 60, max_value=14 * 60).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
moments = st.datetimes(
    min_value=datetime(1900, 1, 2), max_value=datetime(2199, 12, 30), timezones=offsets
)


def hl7(moment: datetime) -> str:
    offset = moment.utcoffset() or timedelta()
    sign = "-" if offset < timedelta() else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return moment.strftime("%Y%m%d%H%M%S") + f"{sign}{minutes // 60:02d}{minutes % 60:02d}"


@given(moments)
def test_zoned_times_become_utc_and_agree_with_the_fhir_normaliser(moment: datetime) -> None:
    value = hl7(moment)
    expected = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert parse_ts(value) == expected
    assert normalize_date(value) == expected
    assert ts_datetime(value) == moment.replace(microsecond=0)


@given(st.dates(min_value=date(1800, 1, 1)))
def test_dates_stay_dates(day: date) -> None:
    assert parse_ts(day.strftime("%Y%m%d")) == day.isoformat()
    assert parse_ts(day.strftime("%Y%m")) == day.isoformat()[:7]


@given(st.text(alphabet="0123456789+-. T:Z", max_size=30))
def test_anything_else_is_none_or_normalised(value: str) -> None:
    result = parse_ts(value)
    assert result is None or NORMALISED.fullmatch(result)
    assert normalize_date(result) == result or result is None
