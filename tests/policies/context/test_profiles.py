"""Model profiles: the shipped table against the providers' published prices, config overrides,
exact cost arithmetic, and windows read from local endpoints (Ollama, vLLM, llama.cpp) served
here by a small HTTP server answering with their documented response shapes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from devops_agent.agent import models as agent_models
from devops_agent.agent.models import model_profile
from devops_agent.config import Settings
from devops_agent.policies.context.discovery import discover
from devops_agent.policies.context.profiles import profile_for, shipped_names, shipped_profile

GENAI_PROVIDER = {"openai": "openai", "anthropic": "anthropic", "google-gla": "google"}


@pytest.mark.parametrize("name", shipped_names())
def test_shipped_prices_match_the_price_snapshot_in_pydantic_ai(name: str) -> None:
    provider, model = name.split(":", 1)
    profile = shipped_profile(name)
    for tokens in (100_000, 300_000):  # both sides of a long-context tier
        ref = calc_price(
            Usage(input_tokens=tokens, output_tokens=50_000), model, provider_id=GENAI_PROVIDER[provider]
        )
        ours = profile.cost(tokens, 50_000)
        assert ours == pytest.approx(ref.total_price, abs=Decimal("1e-9")), (name, tokens)
    cached = calc_price(
        Usage(input_tokens=100_000, cache_read_tokens=60_000), model, provider_id=GENAI_PROVIDER[provider]
    )
    assert profile.cost(100_000, 0, cache_read_tokens=60_000) == pytest.approx(cached.total_price)


def test_cost_is_exact_decimal_arithmetic_of_the_table() -> None:
    gpt4o = shipped_profile("openai:gpt-4o")
    assert gpt4o.cost(1_234, 567) == Decimal("0.008755")  # 1234 x 2.50 + 567 x 10.00, per million
    sonnet = shipped_profile("anthropic:claude-sonnet-4-5")
    # 10k input of which 6k read from the cache and 2k written to it, 1k output.
    expected = (
        Decimal(2_000) * 3 + Decimal(6_000) * Decimal("0.30") + Decimal(2_000) * Decimal("3.75") + 15_000
    ) / 10**6
    assert sonnet.cost(10_000, 1_000, cache_read_tokens=6_000, cache_write_tokens=2_000) == expected


def test_longest_name_wins_and_dated_variants_match() -> None:
    assert shipped_profile("openai:gpt-4o-mini-2024-07-18").input_per_mtok == Decimal("0.15")
    assert shipped_profile("openai:gpt-4o-2024-08-06").input_per_mtok == Decimal("2.50")
    assert shipped_profile("openai-chat:gpt-4o").context_window == 128_000  # same provider, other spelling
    assert shipped_profile("openai:gpt-4o").tokenizer == "o200k_base"


def test_local_and_unknown_models_get_cautious_defaults() -> None:
    assert shipped_profile("ollama:llama3.1").local is True
    assert shipped_profile("ollama:llama3.1").cost(10, 10) == 0
    unknown = shipped_profile("mistral:somemodel")
    assert unknown.source == "default"
    assert unknown.cost(10, 10) is None
    assert shipped_profile("openai-compatible:x").cost(10, 10) is None


def test_config_overrides_win_over_table_and_endpoint() -> None:
    settings = Settings(
        model={
            "name": "ollama:qwen",
            "profiles": {"ollama:qwen": {"context_window": 16_384, "input_per_mtok": "0.01"}},
        }
    )
    profile = profile_for("ollama:qwen", settings.model.profiles, {"context_window": 4_096, "tools": False})
    assert profile.context_window == 16_384
    assert profile.source == "config"
    assert profile.tools is False  # what the endpoint said stays where config is silent
    assert profile.input_per_mtok == Decimal("0.01")


# -- local endpoints describe themselves -----------------------------------------------------------


class _Server:
    def __init__(self, routes: dict[tuple[str, str], Any]) -> None:
        self.routes = routes
        self.seen: list[tuple[str, str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                outer.seen.append((method, self.path, body))
                found = outer.routes.get((method, self.path))
                data = json.dumps(found if found is not None else {"error": "not found"}).encode()
                self.send_response(200 if found is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[_Server] = []

    def start(routes: dict[tuple[str, str], Any]) -> _Server:
        servers.append(_Server(routes))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


# Shapes as each server documents them (Ollama API reference, vLLM's OpenAI server, llama-server).
OLLAMA_SHOW = {
    "modelfile": "FROM llama3.1",
    "parameters": 'num_ctx                        16384\nstop                           "<|eot_id|>"',
    "template": "{{ .Prompt }}",
    "details": {"format": "gguf", "family": "llama", "parameter_size": "8.0B", "quantization_level": "Q4_0"},
    "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
    "capabilities": ["completion", "tools"],
}


def test_ollama_num_ctx_parameter_is_the_window(serve: Any) -> None:
    srv = serve({("POST", "/api/show"): OLLAMA_SHOW})
    found = discover("ollama", f"{srv.url}/v1", "llama3.1", fallback_window=4096)
    assert found == {"tools": True, "context_window": 16_384}
    assert srv.seen[0] == ("POST", "/api/show", {"model": "llama3.1"})


def test_ollama_without_num_ctx_reads_the_loaded_models_context(serve: Any) -> None:
    show = {**OLLAMA_SHOW, "parameters": 'stop "<|eot_id|>"', "capabilities": ["completion"]}
    ps = {"models": [{"name": "llama3.1:latest", "model": "llama3.1:latest", "context_length": 8192}]}
    srv = serve({("POST", "/api/show"): show, ("GET", "/api/ps"): ps})
    assert discover("ollama", f"{srv.url}/v1", "llama3.1", fallback_window=4096) == {
        "tools": False,
        "context_window": 8192,
    }


def test_ollama_trained_maximum_is_only_an_upper_bound(serve: Any) -> None:
    show = {**OLLAMA_SHOW, "parameters": ""}
    srv = serve({("POST", "/api/show"): show, ("GET", "/api/ps"): {"models": []}})
    found = discover("ollama", f"{srv.url}/v1", "llama3.1", fallback_window=4096)
    assert found["context_window"] == 4096  # Ollama serves with its default, not 131072


def test_vllm_max_model_len(serve: Any) -> None:
    models = {
        "object": "list",
        "data": [
            {"id": "Qwen/Qwen2.5-7B-Instruct", "object": "model", "owned_by": "vllm", "max_model_len": 32768},
            {"id": "other", "object": "model", "owned_by": "vllm", "max_model_len": 4096},
        ],
    }
    srv = serve({("GET", "/v1/models"): models})
    assert discover("vllm", f"{srv.url}/v1", "Qwen/Qwen2.5-7B-Instruct", fallback_window=1) == {
        "context_window": 32768
    }


def test_llamacpp_props_n_ctx(serve: Any) -> None:
    props = {
        "default_generation_settings": {"n_ctx": 65536, "params": {"n_predict": -1}},
        "total_slots": 4,
        "model_path": "/models/qwen.gguf",
        "build_info": "b8681",
    }
    srv = serve({("GET", "/props"): props})
    assert discover("llamacpp", f"{srv.url}/v1", "qwen", fallback_window=1) == {"context_window": 65536}


def test_an_endpoint_that_does_not_answer_leaves_the_profile_alone(serve: Any) -> None:
    srv = serve({})
    assert discover("vllm", f"{srv.url}/v1", "x", fallback_window=1) == {}
    assert discover("llamacpp", "http://127.0.0.1:9/v1", "x", fallback_window=1, timeout_s=0.5) == {}


def test_model_profile_asks_the_endpoint_then_config_overrides(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agent_models, "_DISCOVERED", {})
    srv = serve({("GET", "/props"): {"default_generation_settings": {"n_ctx": 12288}}})
    settings = Settings(model={"name": "llamacpp:qwen", "base_url": f"{srv.url}/v1"})
    profile = model_profile(settings.model)
    assert (profile.context_window, profile.source) == (12_288, "endpoint")
    settings = Settings(
        model={
            "name": "llamacpp:qwen",
            "base_url": f"{srv.url}/v1",
            "profiles": {"llamacpp:qwen": {"context_window": 8192}},
        }
    )
    assert model_profile(settings.model).context_window == 8192
