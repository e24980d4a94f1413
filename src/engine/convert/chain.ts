/** The operators of a linear chain, source first: what both dialect readings walk. */
import type { GraphOp, PipelineGraph } from '../graph/types';

/** The chain from its source to the root, or a reason when it is not one line of operators (a zip, a merge). */
export function linearChain(pipeline: PipelineGraph): GraphOp[] | { reason: string } {
  const byId = new Map(pipeline.ops.map((o) => [o.id, o]));
  const chain: GraphOp[] = [];
  let op = byId.get(pipeline.rootId);
  while (op) {
    chain.unshift(op);
    if (op.inputs.length > 1) return { reason: `${op.label} joins several chains; only a single chain is converted.` };
    const input = op.inputs[0];
    if (input === undefined) break;
    op = byId.get(input);
    if (!op) return { reason: `The chain's upstream ${input} could not be followed.` };
  }
  if (pipeline.partial) return { reason: 'Part of the chain could not be followed in the source.' };
  const elsewhere = chain.find((o) => o.file !== pipeline.file);
  if (elsewhere) return { reason: `${elsewhere.label} is written in another file; only a chain written in one file is converted.` };
  return chain;
}
