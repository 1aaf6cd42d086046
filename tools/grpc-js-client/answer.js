#!/usr/bin/env node
// Calls GatewayService.Answer with @grpc/grpc-js (the gRPC implementation Node clinical apps
// use) and prints the response as JSON on stdout. The interop test runs it against the real
// gateway over TLS with an API key; it is also a minimal example for non-C++ clients.
//
//   node answer.js --target=127.0.0.1:50051 --question="Which drug treats asthma?" \
//       [--option=Salbutamol --option=Metformin] [--ca=ca.pem] [--server_name=localhost] \
//       [--api_key=KEY] [--deadline_ms=10000]
//
// Exit status: 0 on OK; otherwise 2 and a JSON line {"code": <number>, "code_name": ..., "details": ...}.
'use strict';
const path = require('path');
const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

function parseArgs(argv) {
  const args = {option: []};
  for (const arg of argv) {
    const m = /^--([a-z_]+)=(.*)$/s.exec(arg);
    if (!m) throw new Error(`unexpected argument: ${arg}`);
    if (m[1] === 'option') args.option.push(m[2]);
    else args[m[1]] = m[2];
  }
  return args;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const protoRoot = args.proto_root || path.join(__dirname, '..', '..', 'protos');
  const definition = protoLoader.loadSync('ibgraphrag/v1/gateway.proto', {
    includeDirs: [protoRoot],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(definition);
  let credentials = grpc.credentials.createInsecure();
  const channelOptions = {};
  if (args.ca) {
    credentials = grpc.credentials.createSsl(fs.readFileSync(args.ca));
    if (args.server_name) channelOptions['grpc.ssl_target_name_override'] = args.server_name;
  }
  const client = new pkg.ibgraphrag.v1.GatewayService(args.target, credentials, channelOptions);
  const metadata = new grpc.Metadata();
  if (args.api_key) metadata.set('authorization', `Bearer ${args.api_key}`);
  const request = {question: args.question || '', options: args.option};
  const deadline = new Date(Date.now() + Number(args.deadline_ms || 10000));
  client.Answer(request, metadata, {deadline}, (err, response) => {
    if (err) {
      const codeName = Object.keys(grpc.status).find((k) => grpc.status[k] === err.code);
      process.stdout.write(JSON.stringify({code: err.code, code_name: codeName,
                                           details: err.details}) + '\n');
      process.exit(2);
    }
    process.stdout.write(JSON.stringify(response) + '\n');
    process.exit(0);
  });
}

main();
