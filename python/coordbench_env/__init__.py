"""coordbench_env: the DESBench factory-scheduling benchmark as a learning
environment, over the HTTP server ``coordbench des serve``.

Standard library only (NumPy arrays are added when NumPy imports). Put
the repository's python/ directory on PYTHONPATH and start a server:

    coordbench des serve --token-env CB_TOKEN
    PYTHONPATH=python python3 -c 'import coordbench_env as ce; \\
        env = ce.parallel_env(base_url="http://127.0.0.1:8765", token=..., paradigm="holonic_hybrid")'

parallel_env has the PettingZoo Parallel API shape, aec_env its AEC
shape (one active agent per step), gym_env the
Gymnasium single-agent shape (centralized paradigm), vector_env steps n
episodes per HTTP request, or per binary request over the unix socket of
``coordbench des serve-socket`` (vector_env(n, socket=PATH)), and
pipelined_env steps such episodes in groups while the learner works on
another group's. docs/python-env.md documents the agents,
observations, reward, masks and seeding.
"""

from .aec import AECEnv, aec_env
from .client import Client, ItemError, ServerError
from .parallel import ParallelEnv, parallel_env
from .pipelined import PipelinedVectorEnv, pipelined_env
from .reward import DEFAULT_WEIGHTS, Reward
from .session import PRIMARY_METRICS, numpy_available
from .single import GymEnv, gym_env
from .socket_env import NO_ACTION, SocketClient, SocketVectorEnv, StepArrays
from .spaces import Box, Dict, Discrete
from .vector import VectorEnv, vector_env

__all__ = ["AECEnv", "Box", "Client", "DEFAULT_WEIGHTS", "Dict", "Discrete", "GymEnv", "ItemError",
           "NO_ACTION", "PRIMARY_METRICS", "ParallelEnv", "PipelinedVectorEnv", "Reward", "ServerError", "SocketClient", "SocketVectorEnv", "StepArrays", "VectorEnv", "gym_env", "numpy_available",
           "aec_env", "parallel_env", "pipelined_env", "vector_env"]
