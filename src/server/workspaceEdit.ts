/**
 * Planned edits → an LSP WorkspaceEdit: one TextDocumentEdit per file carrying the document version
 * the offsets were computed on (so a client refuses it if the file moved on), with a change
 * annotation when a fix makes more than one edit (the client can preview them together).
 */
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { AnnotatedTextEdit, TextDocumentEdit, TextEdit, WorkspaceEdit } from 'vscode-languageserver';
import type { PlannedEdit } from '../engine/fixes/edits';

/** A file as the edit must address it. */
export interface FileVersion {
  uri: string;
  /** The open document's version, or null for a file on disk. */
  version: number | null;
  text: string;
}

export const ANNOTATION_ID = 'plumber.fix';

export function toWorkspaceEdit(edits: PlannedEdit[], fileInfo: (file: string) => FileVersion, annotation?: { label: string; description?: string }): WorkspaceEdit {
  const byFile = new Map<string, PlannedEdit[]>();
  for (const e of edits) {
    const list = byFile.get(e.file) ?? [];
    list.push(e);
    byFile.set(e.file, list);
  }
  const annotate = annotation !== undefined && edits.length > 1;
  const documentChanges: TextDocumentEdit[] = [];
  for (const [file, list] of byFile) {
    const info = fileInfo(file);
    const doc = TextDocument.create(info.uri, 'typescript', info.version ?? 0, info.text);
    const textEdits: Array<TextEdit | AnnotatedTextEdit> = list
      .sort((a, b) => a.start - b.start)
      .map((e) => {
        const edit = { range: { start: doc.positionAt(e.start), end: doc.positionAt(e.end) }, newText: e.newText };
        return annotate ? { ...edit, annotationId: ANNOTATION_ID } : edit;
      });
    documentChanges.push({ textDocument: { uri: info.uri, version: info.version }, edits: textEdits });
  }
  const out: WorkspaceEdit = { documentChanges };
  if (annotate) out.changeAnnotations = { [ANNOTATION_ID]: { label: annotation.label, needsConfirmation: false, description: annotation.description } };
  return out;
}
