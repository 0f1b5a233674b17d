"""The evaluation harness: our agent on recorded incident cases, scored, with a model or without.

Where it sits: beside the interfaces. Like the CLI and the API it *drives* the agent — it opens
sessions through :class:`~devops_agent.agent.session.SessionService` and reads their events — so
it may import the agent, policy, capability and foundation layers; nothing below imports it (the
CLI's ``eval`` commands and ``benchmarks/agent_eval.py`` do). Its replay toolset is a capability
in shape (plain tools with the real specs) registered through the ordinary
:class:`~devops_agent.tools.registry.ToolRegistry`, so every call goes through the real pipeline.

- :mod:`.cases` — HolmesGPT-format case folders (ask, investigate, workload health; variants,
  attached files, earlier turns, skip flags, tags) and ours (the same, plus ``inputs``);
- :mod:`.recordings` — recorded tool outputs and upstream's match rule;
- :mod:`.mapping` + ``data/holmes_tools.yaml`` — which recording answers which call of ours (data);
- :mod:`.shapes` — a recorded output as our tool's result;
- :mod:`.replay` — the replayed catalog, one book of recordings per run, unmatched calls counted;
- :mod:`.runner` — one case through a session on a :class:`~.runner.Target` (a model, or none);
- :mod:`.checks`, :mod:`.judge` — literal and section checks; upstream's judge question;
- :mod:`.scripted` — CI's right and wrong scripted models;
- :mod:`.harness`, :mod:`.results`, :mod:`.baseline`, :mod:`.tables` — repeats, parallelism,
  scores, aggregates, the published baseline, Markdown;
- :mod:`.session` — one evaluation end to end, stored for ``eval compare``.

It must not change how a run behaves: no wrapper, prompt or policy of its own reaches the agent.
"""
