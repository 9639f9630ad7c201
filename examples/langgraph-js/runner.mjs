#!/usr/bin/env node
// A coordbench external controller built as a LangGraph.js StateGraph.
//
//   coordbench des run --instance A3C9-1 --paradigm holonic_hybrid \
//       --controller-command "node examples/langgraph-js/runner.mjs"
//   coordbench des check-controller \
//       --controller-command "node examples/langgraph-js/runner.mjs"
//
// coordbench starts this program once per episode and talks to it in
// newline-delimited JSON (docs/external.md, protocol coordbench-external/v1):
//
//   stdin   {"type":"hello","protocol":...,"episode":{...}}
//   stdout  {"type":"ready",...}
//   stdin   {"type":"decision","payload":{...}}   one per decision step
//   stdout  {"step":N,"actions":{agent_id: option_index,...}}
//   stdin   {"type":"episode_end","metrics":{...}}
//
// The graph has one node per role: plant, area and cell. Its state holds
// the current decision step's views (payload.active_agents). A router sends
// each active agent's view to the node of its role (view.role); the nodes
// run in parallel and each returns {agent_id: index}, which a reducer merges
// into state.actions. The runner writes state.actions as the reply line.
//
// The policy is the same simple greedy rule as examples/python/greedy_runner.py
// (and policy/greedy_py.go). Only JSON objects go to stdout; logs go to stderr.
//
// With COORDBENCH_LANGGRAPH_LLM=1 the role nodes ask a model instead
// (ChatOpenAI, through the OpenAI-compatible endpoint in OPENAI_BASE_URL
// with the key in OPENAI_API_KEY: coordbench's model-call proxy sets both
// with --llm-proxy-upstream). Each agent's call offers one tool,
// choose_option, whose JSON Schema enumerates the view's legal indices,
// and forces it (tool_choice); an answer that is not a legal index, or a
// failed call, falls back to the greedy choice, and the runner says so on
// stderr. COORDBENCH_LANGGRAPH_MODEL names the model (default gpt-4o-mini).

import { createInterface } from "node:readline";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { Annotation, END, START, Send, StateGraph } from "@langchain/langgraph";

const PROTOCOL = "coordbench-external/v1";

function log(...args) {
  console.error("langgraph_runner:", ...args);
}

// ---------------------------------------------------------------------------
// The policy: one function per decision kind (docs/payload.md). Each gets one
// agent's view and returns the index of an option. Only legal_actions are
// considered, in ascending order; a tie goes to the lowest index.
// ---------------------------------------------------------------------------

const legalOptions = (view) => view.legal_actions.map((i) => view.options[i]);

// The first legal option that matches, else the first legal option.
function firstLegal(view, match = () => true) {
  for (const option of legalOptions(view)) {
    if (match(option)) return option.index;
  }
  return view.legal_actions[0];
}

// Compare two key arrays element by element (false < true, numbers by value).
function less(a, b) {
  for (let i = 0; i < a.length; i++) {
    if (a[i] < b[i]) return true;
    if (a[i] > b[i]) return false;
  }
  return false;
}

// The legal option with the smallest key (strictly smaller wins, so a tie
// goes to the lowest index); key returns null to skip an option.
function lowest(view, key) {
  let best = null;
  let bestKey = null;
  for (const option of legalOptions(view)) {
    const k = key(option);
    if (k !== null && (best === null || less(k, bestKey))) {
      best = option.index;
      bestKey = k;
    }
  }
  return best !== null ? best : firstLegal(view);
}

// release (plant): release the job with the earliest due date; never defer.
const release = (view) => lowest(view, (o) => (o.action === "release" ? [o.job.due] : null));

// select_area (plant): an area with a free slot first, then the least
// min_proc_time + transport_time.
const selectArea = (view) =>
  lowest(view, (o) =>
    o.action === "allocate" ? [o.area.free_slots <= 0, o.area.min_proc_time + o.area.transport_time] : null,
  );

// select_cell, award, reroute, plant_fallback: a cell with a free slot first, then the least
// proc_time + transport_time; escalate only if no cell is offered.
const selectCell = (view) =>
  lowest(view, (o) =>
    o.action === "assign" ? [o.cell.free_slots <= 0, o.cell.proc_time + o.cell.transport_time] : null,
  );

// bid (cell): bid high if the cell has a free inbound slot, else decline.
function bid(view) {
  const cell = (view.observation && view.observation.cell) || {};
  if ((cell.free_slots ?? 0) > 0) {
    return firstLegal(view, (o) => o.action === "bid" && o.bid === "high");
  }
  return firstLegal(view, (o) => o.action === "decline");
}

// commit (cell): always accept.
const commit = (view) => firstLegal(view, (o) => o.action === "accept");

const POLICY = {
  release,
  select_area: selectArea,
  select_cell: selectCell,
  award: selectCell,
  reroute: selectCell,
  plant_fallback: selectCell,
  bid,
  commit,
};

function choose(view) {
  const decide = POLICY[view.kind] ?? firstLegal; // an unknown kind: first legal
  return decide(view);
}

// ---------------------------------------------------------------------------
// The graph.
// ---------------------------------------------------------------------------

const DecisionState = Annotation.Root({
  // The current step's views: payload.active_agents, {agent_id: view}.
  views: Annotation(),
  // The decision step's number (payload.step).
  step: Annotation(),
  // The answers, {agent_id: index}; each role node adds its own.
  actions: Annotation({
    reducer: (left, right) => ({ ...left, ...right }),
    default: () => ({}),
  }),
});

// ---------------------------------------------------------------------------
// The model-backed mode (COORDBENCH_LANGGRAPH_LLM=1).
// ---------------------------------------------------------------------------

const LLM_MODE = process.env.COORDBENCH_LANGGRAPH_LLM === "1";
const MAX_OPTION_TEXT = 400; // characters of one option's description in the prompt

// The model, or null in the greedy mode (which does not load
// @langchain/openai). Retries are the proxy's, not ours.
async function makeModel() {
  if (!LLM_MODE) return null;
  const { ChatOpenAI } = await import("@langchain/openai");
  if (!process.env.OPENAI_BASE_URL || !process.env.OPENAI_API_KEY) {
    throw new Error("COORDBENCH_LANGGRAPH_LLM=1 needs OPENAI_BASE_URL and OPENAI_API_KEY (run with --llm-proxy-upstream)");
  }
  return new ChatOpenAI({
    model: process.env.COORDBENCH_LANGGRAPH_MODEL || "gpt-4o-mini",
    temperature: 0,
    maxRetries: 0,
    useResponsesApi: false,
    apiKey: process.env.OPENAI_API_KEY,
    configuration: { baseURL: process.env.OPENAI_BASE_URL },
  });
}

// The tool an agent answers with: its schema enumerates the legal indices.
function chooseTool(view) {
  return {
    type: "function",
    function: {
      name: "choose_option",
      description: "Choose one of the legal options by its index.",
      parameters: {
        type: "object",
        properties: {
          index: { type: "integer", enum: [...view.legal_actions], description: "the index of the chosen option" },
        },
        required: ["index"],
        additionalProperties: false,
      },
    },
  };
}

function prompt(agentId, view, step) {
  const lines = legalOptions(view).map((o) => {
    const text = JSON.stringify(o);
    return `${o.index}: ${text.length > MAX_OPTION_TEXT ? text.slice(0, MAX_OPTION_TEXT) + "…" : text}`;
  });
  return [
    new SystemMessage(
      "You are one agent of a team scheduling a flexible job shop. Choose one legal option " +
        "by calling choose_option with its index. Prefer options that keep machines busy and jobs on time.",
    ),
    new HumanMessage(
      `Decision step ${step}. Agent ${agentId} (role ${view.role}), decision ${view.kind}. Legal options:\n${lines.join("\n")}`,
    ),
  ];
}

// askModel returns the model's legal index for one agent, or the greedy
// choice (saying why on stderr) when the answer is not a legal index.
async function askModel(model, agentId, view, step) {
  const greedy = choose(view);
  let answer;
  try {
    const tool = chooseTool(view);
    const bound = model.bindTools([tool], { tool_choice: { type: "function", function: { name: "choose_option" } } });
    const reply = await bound.invoke(prompt(agentId, view, step));
    const call = (reply.tool_calls || [])[0];
    answer = call && call.name === "choose_option" && call.args ? call.args.index : undefined;
    if (Number.isInteger(answer) && view.legal_actions.includes(answer)) return answer;
    log(`agent ${agentId}: the model's answer ${JSON.stringify(answer ?? reply.content)} is not a legal index; greedy choice ${greedy}`);
  } catch (err) {
    log(`agent ${agentId}: the model call failed (${err && err.message ? err.message : err}); greedy choice ${greedy}`);
  }
  return greedy;
}

// A role node gets one agent's view (through Send) and answers for it:
// with the model in the model-backed mode, else with the greedy rule.
const roleNode = (role, model) => async (input) => {
  const { agentId, view, step } = input;
  if (view.role !== role) log(`node ${role} got a ${view.role} view (${agentId})`);
  const index = model ? await askModel(model, agentId, view, step) : choose(view);
  return { actions: { [agentId]: index } };
};

const ROLES = ["plant", "area", "cell"];

// The router: one Send per active agent, to the node of its role.
function route(state) {
  const sends = [];
  for (const [agentId, view] of Object.entries(state.views)) {
    const role = ROLES.includes(view.role) ? view.role : agentId.split(":")[0];
    sends.push(new Send(ROLES.includes(role) ? role : "cell", { agentId, view, step: state.step }));
  }
  return sends.length > 0 ? sends : END;
}

function buildGraph(model) {
  return new StateGraph(DecisionState)
    .addNode("plant", roleNode("plant", model))
    .addNode("area", roleNode("area", model))
    .addNode("cell", roleNode("cell", model))
    .addConditionalEdges(START, route, [...ROLES, END])
    .addEdge("plant", END)
    .addEdge("area", END)
    .addEdge("cell", END)
    .compile();
}

// ---------------------------------------------------------------------------
// The protocol loop (docs/external.md).
// ---------------------------------------------------------------------------

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

async function main() {
  const model = await makeModel();
  const graph = buildGraph(model);
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === "") continue;
    const message = JSON.parse(line);
    if (message.type === "hello") {
      if (message.protocol !== PROTOCOL) {
        log("unexpected protocol", message.protocol);
        return 2;
      }
      const ep = message.episode;
      log(`episode ${ep.instance} / ${ep.paradigm.mode_id} / seed ${ep.seed}: ${ep.agents.length} agents`);
      if (model) log(`model-backed mode: ${model.model} at ${process.env.OPENAI_BASE_URL}`);
      send({ type: "ready", protocol: PROTOCOL, name: "langgraph-js runner.mjs", framework: "langgraph-js" });
    } else if (message.type === "decision") {
      const payload = message.payload; // exactly the Decision of docs/payload.md
      const out = await graph.invoke({ views: payload.active_agents, step: payload.step, actions: {} });
      send({ step: payload.step, actions: out.actions });
    } else if (message.type === "episode_end") {
      const m = message.metrics || {};
      log(`episode over: status ${m.status}, ${m.G_ds} decision steps, ${m.G_fb} fallbacks`);
      rl.close();
      return 0;
    }
    // Any other message type is newer than this runner: ignore it.
  }
  return 0; // stdin closed
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    log("error:", err && err.stack ? err.stack : err);
    process.exitCode = 1;
  },
);
