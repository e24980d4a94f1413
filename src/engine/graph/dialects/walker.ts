/**
 * Walks dialect chains as `ChainWalker` walks plumber-data's: through `const`/`let` values, awaits,
 * helper functions whose parameters are bound to the call's arguments, and each dialect's
 * recogniser for its sources and methods. Chains it cannot follow faithfully (built in a loop, a
 * method the dialect's extractor does not know) become stops, never a chain with stages missing.
 */
import { CallExpression, NewExpression, Node, SyntaxKind, VariableDeclaration, VariableDeclarationKind } from 'ts-morph';
import { Values, functionOf, symbolOf, throughHelper, unwrap } from '../ast';
import { unalias } from '../library';
import type { Dialect } from '../types';
import { Stops, type DialectRaw } from './common';

/** One dialect's knowledge: which calls start or make a stage, which methods are operators. */
export interface Recogniser {
  dialect: Dialect;
  /** A call or `new` that is a stage without a receiver of the dialect (a source, a `pipeline(…)`, a generator stage). */
  stage(node: CallExpression | NewExpression, w: DialectWalker): DialectRaw | undefined;
  /** A method call on `up` (a stage of this dialect, or undefined when only the receiver's type says so). */
  method(call: CallExpression, name: string, up: DialectRaw | undefined, w: DialectWalker): DialectRaw | undefined;
  /** Methods that consume a chain: they end it and are not operators. */
  consumers: ReadonlySet<string>;
  /** Whether the checker types the receiver as this dialect's chain. */
  typed?(receiver: Node): boolean;
}

const LOOPS = new Set([SyntaxKind.ForStatement, SyntaxKind.ForOfStatement, SyntaxKind.ForInStatement, SyntaxKind.WhileStatement, SyntaxKind.DoStatement]);

export class DialectWalker {
  readonly values: Values;
  readonly stops = new Stops();
  /** Nodes a `pipeline(…)`/`compose(…)`/`.pipe(…)` took as a stage of its own: not chains by themselves. */
  readonly claimed = new Set<Node>();
  /** Variables that get stages in a loop: their chains are not shown (see the stop). */
  readonly loopBuilt = new Set<VariableDeclaration>();
  private readonly memo = new Map<Node, DialectRaw | null>();
  private readonly active = new Set<Node>();
  private readonly bindings = new Map<Node, Node>();

  constructor(
    private readonly recognisers: Recogniser[],
    values: Values,
  ) {
    this.values = values;
  }

  resolve(expr: Node | undefined, depth = 0): DialectRaw | undefined {
    if (!expr || depth > 60) return undefined;
    const e = unwrap(expr);
    if (Node.isAwaitExpression(e)) return this.resolve(e.getExpression(), depth + 1);
    if (Node.isCallExpression(e) || Node.isNewExpression(e)) return this.memoised(e, depth);
    if (Node.isIdentifier(e)) return this.resolveIdentifier(e, depth);
    return undefined;
  }

  private memoised(node: CallExpression | NewExpression, depth: number): DialectRaw | undefined {
    const memo = this.bindings.size === 0;
    const known = memo ? this.memo.get(node) : undefined;
    if (known !== undefined) return known ?? undefined;
    if (this.active.has(node)) return undefined;
    this.active.add(node);
    let result: DialectRaw | undefined;
    try {
      result = this.read(node, depth);
    } finally {
      this.active.delete(node);
    }
    if (memo) this.memo.set(node, result ?? null);
    return result;
  }

  private read(node: CallExpression | NewExpression, depth: number): DialectRaw | undefined {
    for (const r of this.recognisers) {
      const stage = r.stage(node, this);
      if (stage) return stage;
    }
    if (Node.isNewExpression(node)) return undefined;
    const callee = node.getExpression();
    if (Node.isPropertyAccessExpression(callee)) {
      const name = callee.getName();
      const receiver = callee.getExpression();
      const up = this.resolve(receiver, depth + 1);
      if (up) {
        const r = this.recognisers.find((x) => x.dialect === up.dialect);
        const op = r?.method(node, name, up, this);
        if (op) return op;
        if (r && !r.consumers.has(name)) this.stops.add(callee.getNameNode(), `\`.${name}()\` is not a ${up.dialect} operator Plumber knows: the stages before it are shown, it and what follows it are not.`);
        return undefined;
      }
      // The checker is asked only about receivers of a method the dialect has (it types one node at a time).
      for (const r of this.recognisers) {
        const op = r.typed ? r.method(node, name, undefined, this) : undefined;
        if (op && r.typed!(receiver)) return { ...op, partial: true };
      }
      return undefined;
    }
    if (Node.isIdentifier(callee)) return this.resolveHelper(callee, node, depth);
    return undefined;
  }

  /** A call of a user helper that returns a chain: follow it to its return statement with its parameters bound. */
  private resolveHelper(callee: Node, call: CallExpression, depth: number): DialectRaw | undefined {
    const decl = unalias(symbolOf(callee))?.getDeclarations()[0];
    const fn = functionOf(decl);
    if (!fn || fn.getSourceFile().isInNodeModules() || fn.getSourceFile().isDeclarationFile()) return undefined;
    return throughHelper(fn, call, this.active, this.bindings, (returned) => this.resolve(returned, depth + 1));
  }

  private resolveIdentifier(id: Node, depth: number): DialectRaw | undefined {
    const decl = unalias(symbolOf(id))?.getDeclarations()[0] ?? id.getSourceFile().getVariableDeclaration(id.getText());
    if (!decl) return undefined;
    if (Node.isVariableDeclaration(decl)) {
      const sameFile = decl.getSourceFile() === id.getSourceFile();
      const value = this.values.valueAt(decl, sameFile ? id.getStart() : Number.MAX_SAFE_INTEGER);
      const loop = this.loopAssignment(decl);
      if (loop) {
        this.loopBuilt.add(decl);
        if (this.resolve(decl.getInitializer(), depth + 1)) {
          this.stops.add(loop, `\`${decl.getName()}\` gets more stages in a loop, so its chain is only known when it runs: Plumber does not show it rather than show numbers on the wrong lines.`);
        }
        return undefined;
      }
      return value ? this.resolve(value, depth + 1) : undefined;
    }
    if (Node.isParameterDeclaration(decl)) {
      const arg = this.bindings.get(decl);
      if (!arg) return undefined;
      this.bindings.delete(decl);
      try {
        return this.resolve(arg, depth + 1);
      } finally {
        this.bindings.set(decl, arg);
      }
    }
    return undefined;
  }

  /** An assignment to a `let` inside a loop (`ds = ds.map(f)` in a `for`): the chain is built at run time. */
  private loopAssignment(decl: VariableDeclaration): Node | undefined {
    if (decl.getVariableStatement()?.getDeclarationKind() === VariableDeclarationKind.Const) return undefined;
    const name = decl.getName();
    const scope = decl.getFirstAncestor((a) => Node.isBlock(a) || Node.isSourceFile(a)) ?? decl.getSourceFile();
    for (const bin of scope.getDescendantsOfKind(SyntaxKind.BinaryExpression)) {
      if (bin.getOperatorToken().getKind() !== SyntaxKind.EqualsToken) continue;
      const left = bin.getLeft();
      if (!Node.isIdentifier(left) || left.getText() !== name) continue;
      if (bin.getFirstAncestor((a) => LOOPS.has(a.getKind()))) return bin;
    }
    return undefined;
  }
}
