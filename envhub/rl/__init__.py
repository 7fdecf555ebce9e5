"""envhub.rl: the thin client between envhub and a trainer.

Token-exact rollouts (`run_episode`, `rollout_group`) with any token-in/token-out `Policy`
(`HFPolicy`, `OpenAICompletionsPolicy`), the `ChatCodec`, failure-aware GRPO batches
(`RolloutBuffer`, rules of rl.md §6.4) and a small async GRPO trainer. torch and transformers come
with the `rl` extra (`pip install -e '.[rl]'`); this package imports them only where used.
"""

from envhub.rl.buffer import Batch, BufferConfig, RolloutBuffer
from envhub.rl.codec import ChatCodec, parse_tool_call
from envhub.rl.policy import Generation, HFPolicy, OpenAICompletionsPolicy, Policy
from envhub.rl.rollout import RolloutConfig, derive_seed, rollout_group, run_episode
from envhub.rl.trajectory import Trajectory, read_jsonl, write_jsonl

__all__ = ["Batch", "BufferConfig", "ChatCodec", "Generation", "HFPolicy", "OpenAICompletionsPolicy", "Policy",
           "RolloutBuffer", "RolloutConfig", "Trajectory", "derive_seed", "parse_tool_call", "read_jsonl",
           "rollout_group", "run_episode", "write_jsonl"]
