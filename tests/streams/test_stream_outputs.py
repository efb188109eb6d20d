"""`streams.worker.outputs.Outputs` is shared by ingest and both stages, each in a task of its own:
each one's `delivered()` returns only once its own sends are on the broker, whatever the others
wait for, and a refused send raises for whoever waits for it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from streams.metrics import Metrics
from streams.worker.outputs import Outputs


class Broker:
    """A topic whose producer hands out delivery futures that the test completes."""

    def __init__(self) -> None:
        self.app = self
        self.producer = self
        self.futures: list[asyncio.Future[None]] = []

    def get_topic_name(self) -> str:
        return "t"

    async def send(self, topic: str, key: Any, value: Any, partition: Any, timestamp: Any, headers: Any) -> Any:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.futures.append(future)
        return future


def after_one_send(payload: bytes, then: Callable[[Broker, Outputs], Awaitable[None]]) -> None:
    """Run `then` once one send of `payload` is under way (its delivery future not completed)."""
    broker = Broker()
    out = Outputs(broker, broker, Metrics())

    async def scenario() -> None:
        await out.send(broker, payload)
        await then(broker, out)

    asyncio.run(scenario())


def test_a_side_waits_for_its_own_send_when_another_side_waited_first() -> None:
    async def then(broker: Broker, out: Outputs) -> None:
        ingest = asyncio.create_task(out.delivered())  # ingest waits for every send so far
        await asyncio.sleep(0)
        stage = asyncio.create_task(out.delivered())  # then the stage, before it stores its state
        await asyncio.sleep(0.05)
        assert not ingest.done() and not stage.done()  # neither returns before the broker has the send
        broker.futures[0].set_result(None)
        await asyncio.wait_for(asyncio.gather(ingest, stage), 5)
        assert out.pending == []

    after_one_send(b"a stage's forward", then)


def test_a_cancelled_waiter_leaves_the_send_to_the_others() -> None:
    async def then(broker: Broker, out: Outputs) -> None:
        first = asyncio.create_task(out.delivered())
        await asyncio.sleep(0)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        assert not broker.futures[0].cancelled()
        second = asyncio.create_task(out.delivered())
        await asyncio.sleep(0.05)
        assert not second.done()  # still waiting for that send
        broker.futures[0].set_result(None)
        await asyncio.wait_for(second, 5)

    after_one_send(b"findings", then)


def test_a_refused_send_raises_for_each_side_that_waits_for_it() -> None:
    async def then(broker: Broker, out: Outputs) -> None:
        waiters = [asyncio.create_task(out.delivered()) for _ in range(2)]
        await asyncio.sleep(0)
        broker.futures[0].set_exception(RuntimeError("refused"))
        for waiter in waiters:
            with pytest.raises(RuntimeError, match="refused"):
                await waiter
        await out.delivered()  # nothing pending any more: a later wait returns

    after_one_send(b"a dead letter", then)
