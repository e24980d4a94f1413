/**
 * What goes with the record readers (`tfrecord`, `webdataset`): the TFRecord writer, and the
 * `tf.train.Example` codec for records a pipeline decodes or writes itself.
 */
export { TfRecordWriter, writeTfRecord, type TfRecordWriterOptions } from './internal/readers/tfrecord-writer';
export { decodeExample, encodeExample, type Example, type ExampleInput, type Feature } from './internal/readers/example';
export type { WebDatasetSample } from './internal/readers/webdataset';
