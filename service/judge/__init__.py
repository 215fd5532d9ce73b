"""Session performance scoring of OTLP logs (SPEC §3.2 and §5). Pure: no store, no API.

Decoding: `decode_json_body`, `decode_protobuf_body` turn one ExportLogsServiceRequest into a
`DecodedBatch` of flat `LogRecord`s plus a count of rejected records; a malformed request raises
`OTLPDecodeError` (what both receivers share, attribute values, gzip, the errors, is `service.otlp`).
Sessions: `group_by_session`; `SessionAccumulator` keeps one session's running totals.
Score: `score_session` / `SessionAccumulator.score` give a `SessionScore` (`to_dict`, `to_yaml`).
Diagnosis input: `to_run_events` maps a session's records to §3.1 run events.
Files: `judge_log_file` scores one session of a Collector file-exporter log, streaming.
"""

from service.judge.events import RunEvent, parse_tool_parameters, to_run_events, tool_call_args
from service.judge.identity import DEFAULT_IDENTITY_ATTRIBUTES, IdentityRule
from service.judge.otlp import DecodedBatch, LogRecord
from service.judge.otlp_json import decode_json_body
from service.judge.otlp_proto import decode_protobuf_body
from service.judge.rounding import r, round_half_away
from service.judge.scan import FileJudgement, SessionNotFound, judge_log_file
from service.judge.score import SessionAccumulator, SessionScore, score_session
from service.judge.sessions import group_by_session
from service.otlp.attributes import OTLPDecodeError
from service.otlp.gzip import gunzip_body

__all__ = [
    "DEFAULT_IDENTITY_ATTRIBUTES",
    "DecodedBatch",
    "FileJudgement",
    "IdentityRule",
    "LogRecord",
    "OTLPDecodeError",
    "RunEvent",
    "SessionAccumulator",
    "SessionNotFound",
    "SessionScore",
    "decode_json_body",
    "decode_protobuf_body",
    "group_by_session",
    "gunzip_body",
    "judge_log_file",
    "parse_tool_parameters",
    "r",
    "round_half_away",
    "score_session",
    "to_run_events",
    "tool_call_args",
]
