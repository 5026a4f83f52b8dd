"""Traces where observability tools keep them: Langfuse, Arize Phoenix, Jaeger, OTel-JS spans.

Each module reads one tool's export into the OpenTelemetry span model of
:mod:`knowledgepulse.sources.otel` (one definition of a span, of the GenAI dialects and of
the step rules), so a trace converts the same whatever tool stored it. Tempo's export is OTLP
under OTLP's pre-1.0 names, read by the ``otlp`` source itself. Reading needs no dependency.
"""
