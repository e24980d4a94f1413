/**
 * One ts-morph Project for the whole session: open documents are source files whose text comes from
 * the editor, other files are read from disk when a chain leads into them. An edit reparses only the
 * changed file; the type checker is rebuilt lazily (TypeScript reuses unchanged files), and graphs
 * are cached per file until anything changes.
 */
import { ModuleKind, ModuleResolutionKind, Project, ScriptTarget, SourceFile } from 'ts-morph';
import { extractFile, moduleKindOf } from './extract';
import type { FileGraph } from './types';

export interface WorkspaceOptions {
  /** Called when extraction of a file throws: the feature gets an empty graph instead. */
  onError?(file: string, error: unknown): void;
}

export class GraphWorkspace {
  readonly project: Project;
  private generation = 0;
  private readonly cache = new Map<string, { generation: number; graph: FileGraph }>();
  private readonly open = new Set<string>();

  constructor(private readonly options: WorkspaceOptions = {}) {
    this.project = new Project({
      compilerOptions: {
        allowJs: true,
        checkJs: false,
        target: ScriptTarget.ES2022,
        module: ModuleKind.ESNext,
        moduleResolution: ModuleResolutionKind.Bundler,
        allowImportingTsExtensions: true,
        esModuleInterop: true,
        skipLibCheck: true,
        noEmit: true,
        // @types/* would be loaded into every program for nothing: the graph needs plumber-data's types only.
        types: [],
        lib: ['lib.es2022.d.ts'],
      },
      skipAddingFilesFromTsConfig: true,
      skipFileDependencyResolution: true,
    });
  }

  /** Set the text of an open document (reparses that one file). */
  setText(file: string, text: string): SourceFile {
    this.open.add(file);
    const existing = this.project.getSourceFile(file);
    // Opening a file whose text is already loaded from disk changes nothing: keep the program and caches.
    if (existing && existing.getFullText() === text) return existing;
    this.generation++;
    return this.project.createSourceFile(file, text, { overwrite: true });
  }

  /** The document was closed: from now on the file on disk is what imports see. */
  close(file: string): void {
    this.generation++;
    this.open.delete(file);
    this.cache.delete(file);
    const sf = this.project.getSourceFile(file);
    if (!sf) return;
    try {
      sf.refreshFromFileSystemSync();
    } catch {
      this.project.removeSourceFile(sf);
    }
  }

  /** A file changed on disk (a watcher event): reload it unless the editor owns its text. */
  changedOnDisk(file: string): void {
    if (this.open.has(file)) return;
    const sf = this.project.getSourceFile(file);
    if (!sf) return;
    this.generation++;
    try {
      sf.refreshFromFileSystemSync();
    } catch {
      this.project.removeSourceFile(sf);
    }
  }

  sourceFile(file: string): SourceFile | undefined {
    return this.project.getSourceFile(file) ?? this.project.addSourceFileAtPathIfExists(file);
  }

  /**
   * The project files `file` imports with a relative specifier (`./lib`, `../builders.ts`), resolved
   * the way the graph resolves them: where a pipeline's chain may be written when the file only
   * wires it up (a factory calling a builder class from another module).
   */
  importedFiles(file: string): string[] {
    const sf = this.sourceFile(file);
    if (!sf) return [];
    const out = new Set<string>();
    for (const decl of [...sf.getImportDeclarations(), ...sf.getExportDeclarations()]) {
      const spec = decl.getModuleSpecifierValue();
      if (!spec || !spec.startsWith('.')) continue;
      let target: SourceFile | undefined;
      try {
        target = decl.getModuleSpecifierSourceFile();
      } catch {
        target = undefined;
      }
      if (target && !target.isDeclarationFile()) out.add(target.getFilePath());
    }
    return [...out];
  }

  /** The file's pipelines (cached until anything in the workspace changes). */
  graphOf(file: string): FileGraph {
    const hit = this.cache.get(file);
    if (hit && hit.generation === this.generation) return hit.graph;
    let graph: FileGraph;
    const sf = this.sourceFile(file);
    if (!sf) {
      graph = { file, moduleKind: 'cjs', pipelines: [], typed: false };
    } else {
      try {
        graph = extractFile(sf);
      } catch (error) {
        this.options.onError?.(file, error);
        graph = { file, moduleKind: moduleKindOf(file, sf.getFullText()), pipelines: [], typed: false };
      }
    }
    this.cache.set(file, { generation: this.generation, graph });
    return graph;
  }
}
