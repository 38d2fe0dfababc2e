"""schemathesis against our OpenAPI document, in-process over ASGI (no network).

Generated requests hit the real app (with a device token, which the client sends) over a real
ExecutorService; every answer must be a
documented status code and content type, match its response schema and headers, and never be
a 5xx. Schema-violating requests (negative mode, for the POSTs: the GETs have nothing to break)
must be refused, a missing required header too, an undocumented method must be a 405 with
`Allow`. Every check of schemathesis runs except positive_data_acceptance: a schema-valid body
may still be refused for a rule the schema cannot say (header and body keys that disagree).
Examples are bounded so the whole run stays well under a minute.
"""

from __future__ import annotations

import dataclasses
import shutil

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from schemathesis.generation import GenerationMode

from cookwala_ros.executor.config import StaticPorts
from cookwala_ros.executor.service import ExecutorService
from cookwala_ros.http.app import create_app
from cookwala_ros.http.openapi_doc import load_openapi
from http_helpers import SOUP

MAX_EXAMPLES = 12
TOKEN = "fuzz-device-token"
CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance, checks.response_headers_conformance, checks.negative_data_rejection,
          checks.missing_required_header, checks.unsupported_method, checks.allow_header_conformance,
          checks.use_after_free, checks.ensure_resource_availability, checks.ignored_auth]


@pytest.fixture(scope="module")
def fuzz_service(tmp_path_factory, device_executor_config):
    root = tmp_path_factory.mktemp("fuzz")
    library = root / "recipes"
    library.mkdir()
    shutil.copy(SOUP, library / SOUP.name)
    svc = ExecutorService(dataclasses.replace(device_executor_config, data_dir=root / "data", library_dir=library),
                          StaticPorts(), poll_recalls=False)
    yield svc
    svc.close()


@pytest.fixture(scope="module")
def api_schema(fuzz_service):
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(fuzz_service, token=TOKEN))


OPERATIONS = sorted((path, method, mode) for path, item in load_openapi()["paths"].items() for method in item
                    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
                    if method == "post" or (method == "get" and mode == GenerationMode.POSITIVE))


@pytest.mark.parametrize(("path", "method", "mode"), OPERATIONS)
def test_no_server_error_and_no_schema_violation(api_schema, path, method, mode):
    operation = api_schema[path][method.upper()]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def exchange(case):
        case.call_and_validate(checks=CHECKS, headers={"Authorization": f"Bearer {TOKEN}"})

    exchange()
