// The evidence viewer's logic: read the form, POST /v1/answer on this origin, render the
// AnswerResponse (proto3 JSON: fields at their default value are absent). Every piece of
// response text reaches the DOM through textContent or cytoscape's canvas labels, never as HTML.
// The question goes nowhere but the gateway: no storage, no other URL.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);

  // ---- form and query-string prefill ----

  // #question=...&options=A&options=B (or options="A\nB")&task=TASK_OPEN&autorun=1 fill the
  // form (links and the headless browser test). They are read from the URL's fragment, which a
  // browser never sends to the server, so the question cannot reach a proxy's or ingress's access
  // log through the request line; the address bar is then cleared of them so the question does
  // not linger in it either. The API key is never read from the URL.
  function prefillFromQuery() {
    const params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
    if (params.has('question')) $('question').value = params.get('question');
    const options = params.getAll('options');
    if (options.length > 0) $('options').value = options.join('\n');
    if (params.has('task')) $('task').value = params.get('task');
    if (window.location.hash !== '' || window.location.search !== '') {
      window.history.replaceState(null, '', window.location.pathname);
    }
    return params.get('autorun') === '1';
  }

  function readRequest() {
    const request = { question: $('question').value.trim() };
    const options = $('options').value.split('\n').map((s) => s.trim()).filter((s) => s !== '');
    if (options.length > 0) request.options = options;
    if ($('task').value !== 'TASK_UNSPECIFIED') request.task = $('task').value;
    return request;
  }

  // ---- small DOM helpers (text only) ----

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function cell(row, text, className) {
    const td = document.createElement('td');
    td.textContent = text;
    if (className) td.className = className;
    row.appendChild(td);
  }

  function fixed(x, digits) {
    return typeof x === 'number' ? x.toFixed(digits) : '0';
  }

  function showError(message) {
    $('error').textContent = message;
    $('error').hidden = false;
  }

  // ---- rendering ----

  function renderAnswer(response, request) {
    const answer = response.answer || {};
    $('answer').textContent = answer.text || '(no answer)';
    let option = '—';
    if (answer.option_letter) {
      const index = answer.option_index || 0;
      const text = request.options && request.options[index] ? ' ' + request.options[index] : '';
      option = answer.option_letter + ')' + text;
    } else if (answer.label) {
      option = answer.label;
    }
    $('answer-option').textContent = option;
    let confidence = 'confidence' in answer ? fixed(answer.confidence, 3) : '—';
    if (answer.low_confidence) confidence += ' (low: treat with caution)';
    if (answer.insufficient_evidence) confidence += ' (insufficient evidence)';
    $('answer-confidence').textContent = confidence;
    $('answer-backend').textContent = answer.backend || '—';
    $('answer-intent').textContent = intentText(response.intent || {});
    $('answer-class').textContent = answer.question_class || '—';
    $('answer-rationale').textContent = answer.rationale || '';
  }

  // "treats -> compound (all of the entities; from the words: drug, treat)": how the gateway
  // read the question (AnswerResponse.intent).
  function intentText(intent) {
    const kinds = intent.relation_kinds || [];
    const types = intent.answer_types || [];
    if (!kinds.length && !types.length) return 'no relation recognised (evidence about the topic)';
    const notes = [];
    if (intent.constraint === 'INTENT_CONSTRAINT_ALL_OF') notes.push('all of the entities');
    if (intent.constraint === 'INTENT_CONSTRAINT_EXCEPT') notes.push('the exception');
    if (intent.single_answer) notes.push('one answer expected');
    if (intent.asks_cause) notes.push('a causal gene: risk loci rank after');
    if (intent.origin === 'request') notes.push('given by the request');
    else if ((intent.cues || []).length) notes.push('from the words: ' + intent.cues.join(', '));
    return (kinds.length ? kinds.join(', ') : 'any relation') + ' -> ' +
        (types.length ? types.join('|') : 'any type') + (notes.length ? ' (' + notes.join('; ') + ')' : '');
  }

  function renderDegraded(response) {
    const list = $('degraded');
    clear(list);
    for (const d of response.degraded || []) {
      const li = document.createElement('li');
      li.textContent = 'Degraded: ' + (d.component || '?') + ': ' + (d.reason || '');
      list.appendChild(li);
    }
  }

  function renderEntities(response) {
    const body = $('entities').tBodies[0];
    clear(body);
    for (const e of response.entities || []) {
      const entity = e.entity || {};
      const row = body.insertRow();
      cell(row, entity.name || '');
      cell(row, entity.type || '');
      cell(row, entity.external_id || '');
      cell(row, (e.mention && e.mention.text) || '');
      cell(row, fixed(e.question_similarity, 3), 'num');
      cell(row, fixed(e.relatedness, 3), 'num');
      cell(row, fixed(e.consistency, 3), 'num');
    }
  }

  // "hetionet [CC0] + disgenet [ODbL 1.0]"; responses from before provenance carry only `source`.
  function sourcesText(t) {
    const sources = t.sources || [];
    if (sources.length === 0) return t.source || '';
    const licenses = t.licenses || [];
    return sources.map((s, i) => (licenses[i] ? s + ' [' + licenses[i] + ']' : s)).join(' + ');
  }

  function renderEvidenceTable(response) {
    const body = $('evidence').tBodies[0];
    clear(body);
    for (const t of response.evidence || []) {
      const row = body.insertRow();
      cell(row, (t.head && t.head.name) || '');
      cell(row, t.relation || '');
      cell(row, (t.tail && t.tail.name) || '');
      cell(row, fixed(t.score, 3), 'num');
      cell(row, sourcesText(t));
    }
  }

  function renderTimings(response) {
    const body = $('timings').tBodies[0];
    clear(body);
    for (const t of response.timings || []) {
      const row = body.insertRow();
      cell(row, t.stage || '');
      cell(row, fixed(t.duration_ms, 1), 'num');
    }
    $('request-id').textContent = response.request_id ? 'Request id: ' + response.request_id : '';
  }

  // ---- the evidence graph ----

  // A node per entity: the external id is stable across snapshots; the internal id (absent in
  // JSON when 0) is the fallback.
  function nodeId(ref) {
    return ref.external_id || 'id:' + (ref.id || 0);
  }

  // The entity the answer names: the chosen option's text, else the answer text, matched
  // against node names without case.
  function answerNames(response, request) {
    const answer = response.answer || {};
    const names = [];
    if (answer.option_letter && request.options) {
      const option = request.options[answer.option_index || 0];
      if (option) names.push(option.toLowerCase());
    }
    if (answer.text) names.push(answer.text.toLowerCase());
    return names;
  }

  function graphElements(response, request) {
    const nodes = new Map();
    const addNode = (ref) => {
      const id = nodeId(ref);
      if (!nodes.has(id)) nodes.set(id, { id: id, label: ref.name || id, type: ref.type || '' });
      return id;
    };
    const edges = [];
    (response.evidence || []).forEach((t, i) => {
      const source = addNode(t.head || {});
      const target = addNode(t.tail || {});
      const score = typeof t.score === 'number' ? t.score : 0;
      edges.push({ data: { id: 'edge' + i, source: source, target: target,
                           label: t.relation || '', width: 1 + 7 * Math.max(0, Math.min(1, score)) } });
    });
    const question = new Set((response.entities || []).map((e) => nodeId(e.entity || {})));
    question.forEach((id) => {
      if (!nodes.has(id)) {
        const e = response.entities.find((x) => nodeId(x.entity || {}) === id);
        addNode(e.entity || {});
      }
    });
    const wanted = answerNames(response, request);
    const answer = new Set([...nodes.values()].filter((n) => wanted.includes(n.label.toLowerCase()))
                               .map((n) => n.id));
    const nodeElements = [...nodes.values()].map((n) => ({
      data: n,
      classes: [question.has(n.id) ? 'question' : '', answer.has(n.id) ? 'answer' : '']
                   .filter((c) => c !== '').join(' '),
    }));
    return { elements: nodeElements.concat(edges), question: [...question], answer: [...answer] };
  }

  const GRAPH_STYLE = [
    { selector: 'node', style: { 'label': 'data(label)', 'background-color': '#9aa5b8',
      'font-size': 11, 'text-wrap': 'wrap', 'text-max-width': 140, 'width': 22, 'height': 22 } },
    { selector: 'node.question', style: { 'background-color': '#2f6fdb', 'width': 30, 'height': 30 } },
    { selector: 'node.answer', style: { 'background-color': '#1c9a4a', 'border-width': 4,
      'border-color': '#0d5c2a', 'width': 34, 'height': 34 } },
    { selector: 'edge', style: { 'width': 'data(width)', 'label': 'data(label)', 'font-size': 9,
      'curve-style': 'bezier', 'target-arrow-shape': 'triangle', 'line-color': '#b7bfcc',
      'target-arrow-color': '#b7bfcc', 'text-rotation': 'autorotate', 'color': '#4a5263' } },
  ];

  let cy = null;

  // Draws the graph; once laid out, the container reports what it shows in data-* attributes
  // (the headless browser test reads them).
  function renderGraph(response, request) {
    const container = $('graph');
    const graph = graphElements(response, request);
    if (cy !== null) cy.destroy();
    container.dataset.status = 'drawing';
    cy = window.cytoscape({ container: container, elements: graph.elements, style: GRAPH_STYLE,
                            layout: { name: 'cose', animate: false, randomize: false },
                            wheelSensitivity: 0.3 });
    container.dataset.nodeCount = String(cy.nodes().length);
    container.dataset.edgeCount = String(cy.edges().length);
    container.dataset.questionNodes = graph.question.join(' ');
    container.dataset.answerNodes = graph.answer.join(' ');
    container.dataset.status = 'drawn';
    $('graph-summary').textContent = cy.nodes().length + ' entities, ' + cy.edges().length +
        ' evidence triples';
  }

  // ---- the call ----

  async function callAnswer(request) {
    const headers = { 'Content-Type': 'application/json' };
    const key = $('api-key').value.trim();
    if (key !== '') headers['X-Api-Key'] = key;
    const res = await fetch('../v1/answer', { method: 'POST', headers: headers,
      body: JSON.stringify(request), credentials: 'same-origin', cache: 'no-store',
      referrerPolicy: 'no-referrer' });
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      throw new Error('HTTP ' + res.status + ': the answer is not JSON');
    }
    if (!res.ok) {
      throw new Error((body.code || 'HTTP ' + res.status) + ': ' + (body.message || '') +
          (body.request_id ? ' (request id ' + body.request_id + ')' : ''));
    }
    return body;
  }

  async function ask(event) {
    if (event) event.preventDefault();
    const request = readRequest();
    $('error').hidden = true;
    if (request.question === '') {
      showError('question: must not be empty');
      return;
    }
    $('ask').disabled = true;
    $('status').textContent = 'Asking…';
    try {
      const response = await callAnswer(request);
      $('result').hidden = false;
      renderAnswer(response, request);
      renderDegraded(response);
      renderEntities(response);
      renderEvidenceTable(response);
      renderTimings(response);
      renderGraph(response, request);
      $('status').textContent = '';
      document.body.dataset.state = 'answered';
    } catch (e) {
      showError(e.message);
      $('status').textContent = '';
      document.body.dataset.state = 'error';
    } finally {
      $('ask').disabled = false;
    }
  }

  // Anything the Content-Security-Policy blocked (a regression in this page or in cytoscape)
  // is counted where the headless browser test can see it.
  function countPolicyViolations() {
    let violations = 0;
    document.addEventListener('securitypolicyviolation', () => {
      violations += 1;
      document.body.dataset.cspViolations = String(violations);
    });
  }

  function main() {
    countPolicyViolations();
    if (typeof window.cytoscape !== 'function') {
      showError('cytoscape.min.js did not load: the graph cannot be drawn');
    }
    $('ask-form').addEventListener('submit', ask);
    if (prefillFromQuery()) ask(null);
  }

  main();
})();
