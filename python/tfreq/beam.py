"""Count the executor keys of request logs too big for one machine, with Apache Beam.

    python -m tfreq.beam --input 'gs://bucket/logs/prediction_logs-*.gz' \\
        --output summary.json [Beam pipeline options: --runner, --project, ...]

Each worker has tfreq's Rust core read and summarise whole files (gzip or plain TFRecord logs
of PredictionLogs, streamed in constant memory; bare requests; no per-record Python), and the
per-file summaries are combined by :class:`MergeSummaries`, the same merge as ``tfreq keys
merge``. The output is one ``tfreq keys --format json`` summary (schema 1): merge it with
others, or give it to ``tfreq warmup``.

Needs ``pip install 'tfreq[beam]'`` (apache-beam). On a distributed runner the workers need
tfreq too: docs/beam.md says how for Dataflow, Flink and Spark.
"""

from __future__ import annotations

import argparse
import sys
from typing import Iterable, List, Optional

try:
    import apache_beam as beam
    from apache_beam.io import fileio
    from apache_beam.options.pipeline_options import PipelineOptions
except ImportError as e:  # pragma: no cover - exercised where apache-beam is missing
    raise ImportError("tfreq.beam needs Apache Beam: pip install 'tfreq[beam]'") from e

from . import _tfreq


def summarize_file(f: "fileio.ReadableFile") -> str:
    """The summary (JSON text) of one matched file, read through Beam's file systems (so
    gs://, s3://, hdfs:// work as the runner's file systems do) and streamed into tfreq."""
    path = f.metadata.path
    # Compressed files are inflated by tfreq (it detects gzip and zlib from the bytes),
    # so Beam must hand over the raw bytes.
    with f.open(compression_type=beam.io.filesystem.CompressionTypes.UNCOMPRESSED) as handle:
        return _tfreq.summarize_reader(path, handle)


class MergeSummaries(beam.CombineFn):
    """Combines summaries (JSON texts) exactly as ``tfreq keys merge``: counts summed,
    each key's earliest request kept; associative and commutative, so any grouping of
    files over workers gives the same result."""

    def create_accumulator(self) -> List[str]:
        return []

    def add_input(self, acc: List[str], summary: str) -> List[str]:
        return self._fold(acc + [summary])

    def merge_accumulators(self, accs: Iterable[List[str]]) -> List[str]:
        out: List[str] = []
        for a in accs:
            out.extend(a)
        return self._fold(out)

    def extract_output(self, acc: List[str]) -> str:
        return _tfreq.merge_summaries(acc)

    @staticmethod
    def _fold(acc: List[str]) -> List[str]:
        # Keep the accumulator one summary long once it grows, so memory stays that of
        # one summary whatever the number of files.
        return [_tfreq.merge_summaries(acc)] if len(acc) > 8 else acc


def pipeline(p: "beam.Pipeline", pattern: str, output: str) -> None:
    """Adds the steps to ``p``: match ``pattern``, summarise each file, merge, write one
    line of JSON to ``output``."""
    (
        p
        | "Match" >> fileio.MatchFiles(pattern)
        | "Open" >> fileio.ReadMatches()
        | "Summarise" >> beam.Map(summarize_file)
        | "Merge" >> beam.CombineGlobally(MergeSummaries())
        | "Write" >> beam.io.WriteToText(output, num_shards=1, shard_name_template="")
    )


def main(argv: Optional[List[str]] = None) -> None:
    """``python -m tfreq.beam --input PATTERN --output FILE [Beam options]``."""
    parser = argparse.ArgumentParser(prog="python -m tfreq.beam", description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", required=True, help="file pattern of the logs (gs://..., /data/logs-*.gz)")
    parser.add_argument("--output", required=True, help="where the summary (JSON) is written")
    known, beam_args = parser.parse_known_args(argv)
    with beam.Pipeline(options=PipelineOptions(beam_args)) as p:
        pipeline(p, known.input, known.output)


if __name__ == "__main__":
    main(sys.argv[1:])
