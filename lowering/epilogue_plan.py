"""The fusion's epilogue decisions as data (`Epilogues`), apart from lowering.epilogue, which
makes them, so a graph without a matmul never imports the gemm machinery."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..frontend.ir import Node


@dataclass
class Epilogues:
    """The fusion's epilogue decisions: for each matmul id whose product is not stored, the
    stored nodes its gemm computes (graph order); why each other matmul keeps its product."""

    roots: dict[int, list[Node]] = field(default_factory=dict)
    matmul: dict[int, Node] = field(default_factory=dict)
    refused: dict[int, str] = field(default_factory=dict)
    sunk: dict[int, int] = field(default_factory=dict)  # matmul id -> node stored instead

    def root_of(self) -> dict[int, int]:
        """Epilogue root id -> id of the matmul whose gemm computes it."""
        return {r.id: m for m, roots in self.roots.items() for r in roots}
