/**
 * The server's memory between requests: documents and their profiles, the shared ts-morph
 * workspace, settings and trust. Graphs are brought up to date lazily — a burst of keystrokes costs
 * one reparse, when a feature next asks.
 */
import * as os from 'node:os';
import { DEFAULT_SETTINGS, type Settings } from '../shared/settings';
import type { CodeActionDeps } from './features/codeActions';
import { fileToUri, uriToFile } from './features/format';
import type { FixContext } from '../engine/fixes/edits';
import type { FileVersion } from './workspaceEdit';
import type { FileGraph } from '../engine/graph/types';
import { GraphWorkspace } from '../engine/graph/workspace';
import { lintPipelines, type LintFinding } from '../engine/lints/rules';
import { DocumentStore } from './state';
import { buildViews, type PipelineView } from './views';
import { bound, cutDiagnostic, cutMessage, type Bounded, type Cut } from './bounds';
import type { Diagnostic } from 'vscode-languageserver';
import { SOURCE, diagnostics } from './features/diagnostics';

export class Session {
  readonly store = new DocumentStore();
  readonly workspace: GraphWorkspace;
  settings: Settings = structuredClone(DEFAULT_SETTINGS);
  trusted = true;
  readonly cores = os.availableParallelism();
  private readonly lintCache = new WeakMap<FileGraph, LintFinding[]>();
  private readonly boundedText = new Map<string, { source: string; bounded: Bounded }>();

  constructor(private readonly log: (message: string) => void) {
    this.workspace = new GraphWorkspace({
      onError: (file, error) => this.log(`Plumber could not read the pipelines of ${file}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
    });
  }

  /** Open or change a document; returns pipelines whose staleness flipped. */
  update(uri: string, version: number | null, text: string): string[] {
    return this.store.set(uri, uriToFile(uri), version, text);
  }

  close(uri: string): void {
    this.boundedText.delete(uri);
    const doc = this.store.get(uri);
    this.store.close(uri);
    if (doc) this.workspace.close(doc.file);
  }

  graph(uri: string): FileGraph {
    const doc = this.store.get(uri);
    const file = doc?.file ?? uriToFile(uri);
    if (doc) {
      const { text } = this.bounded(uri, doc.text);
      const sf = this.workspace.project.getSourceFile(file);
      if (!sf || sf.getFullText() !== text) this.workspace.setText(file, text);
    }
    return this.workspace.graphOf(file);
  }

  /** Where the analysed part of a very large document ends (see bounds.ts); undefined when all of it is analysed. */
  cut(uri: string): Cut | undefined {
    const doc = this.store.get(uri);
    return doc ? this.bounded(uri, doc.text).cut : undefined;
  }

  /** The part of the document the graph sees, computed once per text; a new cut is logged once. */
  private bounded(uri: string, text: string): Bounded {
    const hit = this.boundedText.get(uri);
    if (hit?.source === text) return hit.bounded;
    const bounded = bound(text);
    this.boundedText.set(uri, { source: text, bounded });
    if (bounded.cut) this.log(`Plumber: ${uri}: ${cutMessage(bounded.cut)}`);
    return bounded;
  }

  views(uri: string): PipelineView[] {
    const doc = this.store.get(uri);
    if (!doc) return [];
    return buildViews(doc, this.graph(uri));
  }

  lints(uri: string): LintFinding[] {
    const graph = this.graph(uri);
    let found = this.lintCache.get(graph);
    if (!found) {
      found = lintPipelines(graph.pipelines, { cores: this.settings.model.cores > 0 ? this.settings.model.cores : this.cores });
      this.lintCache.set(graph, found);
    }
    return found;
  }

  /**
   * The diagnostics published for a document: its findings and bottlenecks (features/diagnostics.ts,
   * the document's suppression comments applied), and where a very large one stops being analysed.
   */
  diagnostics(uri: string): Diagnostic[] {
    const text = this.store.get(uri)?.text ?? '';
    const list = diagnostics(uri, uriToFile(uri), this.views(uri), this.lints(uri), this.settings.diagnostics, this.graph(uri).stops, text);
    const cut = this.cut(uri);
    if (cut && this.settings.diagnostics.enabled) list.push(cutDiagnostic(cut, SOURCE));
    return list;
  }

  fileInfo(file: string): FileVersion {
    const doc = this.store.all().find((d) => d.file === file && d.version !== null);
    if (doc) return { uri: doc.uri, version: doc.version, text: doc.text };
    return { uri: fileToUri(file), version: null, text: this.workspace.sourceFile(file)?.getFullText() ?? '' };
  }

  fixContext(view: PipelineView): FixContext {
    return {
      pipeline: view.graph,
      graphOf: (file) => this.workspace.graphOf(file),
      textOf: (file) => this.workspace.sourceFile(file)?.getFullText() ?? '',
      opFor: (id) => view.byProfileId.get(id) ?? view.graph.ops.find((o) => o.id === id),
      runtimeModuleOf: (id) => view.record?.profile.ops.find((o) => o.id === id)?.fnModule,
    };
  }

  actionDeps(disabledSupport: boolean): CodeActionDeps {
    return { fixContext: (v) => this.fixContext(v), fileInfo: (f) => this.fileInfo(f), disabledSupport, preview: this.settings.fixes.preview };
  }
}
